/**
 * `knl show`'s rendering: one session's events (upcast, in `seq` order) as a transcript a person
 * reads.
 *
 * Owns the layout: a header (id, script, owner, labels, start), the prompt and other messages in
 * full, one `── turn N` line per model call (model, tokens in/out, time, cost) followed by the
 * turn's text in full, its thinking and tool calls on one line each — `→ name {arguments}` and
 * `← name ok|error, time: result` — cut to `width`, every refusal, stop and error as a `!` line,
 * and a closing line with the status and totals (turns, tokens, cost, duration). Events of other
 * kinds (a script's own `s:append`) show as `· kind {data}`, also cut to `width`;
 * `budget_charge` is left out (the totals say what was spent).
 *
 * Invariant: a pure function of the events; nothing is read or written here. Cost shows only when
 * the model calls carry `usage.cost_usd` (a priced model, `llm_proto.prices`): there is no price
 * table on this side to guess from.
 */
import type { EventRow } from "../knl/store.ts";
import { cost, duration, isoLocal, oneLine } from "./format.ts";

type Data = Record<string, unknown>;

const num = (v: unknown): number => typeof v === "number" && Number.isFinite(v) ? v : 0;
const str = (v: unknown): string => typeof v === "string" ? v : v === undefined || v === null ? "" : json(v);

function json(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** `k=v, k=v` of a labels object, or `-`. */
export function labelText(labels: Record<string, unknown>): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}=${typeof v === "string" ? v : json(v)}`);
  return pairs.length ? pairs.join(", ") : "-";
}

/** The text of a message's content: a string, or its text blocks (other blocks as `[type]`). */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return str(content);
  return content.map((b) => {
    const block = b as Data;
    if (block?.type === "text") return str(block.text);
    if (block?.type === "tool_result") {
      return `[tool_result ${str(block.tool_use_id)}] ${contentText(block.content)}`;
    }
    return `[${str(block?.type) || "block"}]`;
  }).join("\n");
}

const indent = (text: string) => text.split("\n").map((l) => l ? `  ${l}` : "").join("\n");

/** The transcript of `events` (one session's, in order); `width` cuts one-line items (0: never). */
export function transcript(events: EventRow[], width: number): string {
  const out: string[] = [];
  const cut = (line: string) => oneLine(line, width);
  const requests = new Map<unknown, Data>();
  let turns = 0, tokensIn = 0, tokensOut = 0, tokens = 0;
  let costSum: number | null = null;
  let closed: Data | undefined;
  const first = events[0];
  const last = events.at(-1);

  for (const ev of events) {
    const d = ev.data as Data;
    const beat = ev.meta.beat;
    switch (ev.kind) {
      case "session_open": {
        out.push(`session ${ev.stream}${d.script ? `  ${str(d.script)}` : ""}  owner ${str(d.owner) || "-"}`);
        out.push(`started ${isoLocal(ev.epoch_ms)}  labels ${labelText(ev.meta)}`);
        if (d.parent) out.push(`parent ${str(d.parent)}`);
        break;
      }
      case "msg_user":
      case "msg_assistant":
      case "msg_system": {
        out.push("", `> ${ev.kind.slice(4)}`, indent(contentText(d.content)));
        break;
      }
      case "llm_request":
        turns++;
        requests.set(beat, d);
        break;
      case "llm_response": {
        const u = (d.usage ?? {}) as Data;
        tokensIn += num(u.input_tokens);
        tokensOut += num(u.output_tokens);
        tokens += num(u.total_tokens) || num(u.input_tokens) + num(u.output_tokens);
        if (typeof u.cost_usd === "number") costSum = (costSum ?? 0) + u.cost_usd;
        const facts = [
          str(d.model) || str(requests.get(beat)?.model) || "model",
          `${num(u.input_tokens)} in / ${num(u.output_tokens)} out`,
        ];
        if (typeof d.elapsed_ms === "number") facts.push(duration(d.elapsed_ms));
        if (typeof u.cost_usd === "number") facts.push(cost(u.cost_usd));
        if (d.stop_reason) facts.push(`stop ${str(d.stop_reason)}`);
        out.push("", `── turn ${beat ?? turns} · ${facts.join(" · ")}`);
        for (
          const b of Array.isArray(d.content) ? d.content as Data[] : [{ type: "text", text: d.content }]
        ) {
          if (b?.type === "text" && str(b.text) !== "") out.push(indent(str(b.text)));
          else if (b?.type === "thinking") out.push(cut(`  (thinking) ${str(b.thinking)}`));
          // tool_use blocks: shown from their tool_call events, with what came back
        }
        break;
      }
      case "llm_call_failed": {
        const model = str(requests.get(beat)?.model) || "model";
        out.push("", `── turn ${beat ?? turns} · ${model}`, cut(`  ! model call failed: ${str(d.error)}`));
        break;
      }
      case "tool_call":
        out.push(cut(`  → ${str(d.name)} ${json(d.input ?? {})}`));
        break;
      case "tool_result": {
        const took = typeof d.elapsed_ms === "number" ? `, ${duration(d.elapsed_ms)}` : "";
        out.push(
          cut(`  ← ${str(d.name)} ${d.is_error === true ? "error" : "ok"}${took}: ${contentText(d.content)}`),
        );
        break;
      }
      case "beat_refused":
        out.push(cut(`  ! refused: ${str(d.reason)}`));
        break;
      case "beat_stopped":
        out.push(cut(`  ! stopped${d.where ? ` (${str(d.where)})` : ""}: ${str(d.reason)}`));
        break;
      case "budget_charge":
        break;
      case "agent_result": {
        out.push("", `agent: ${str(d.stop_reason) || "?"}${d.ok === true ? "" : " (not ok)"}`);
        if (d.error) out.push(cut(`  ! ${str(d.error)}`));
        break;
      }
      case "session_close":
        closed = d;
        if (d.error) out.push("", cut(`! ${str(d.error)}`));
        break;
      default:
        out.push(cut(`  · ${ev.kind} ${json(d)}`));
    }
  }

  const status = closed ? str(closed.status) || "closed" : "open (no close recorded)";
  const totals = [
    status,
    `${turns} turn${turns === 1 ? "" : "s"}`,
    `${tokens} tokens (${tokensIn} in, ${tokensOut} out)`,
  ];
  if (costSum !== null) totals.push(cost(costSum));
  if (first && last) totals.push(duration(last.epoch_ms - first.epoch_ms));
  out.push("", `── end · ${totals.join(" · ")}`);
  return out.join("\n") + "\n";
}
