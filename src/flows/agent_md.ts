/**
 * `agent.md` files: an agent declared as YAML front matter plus a system prompt.
 *
 * Owns the file's rules (as the seed 004 engine reads them): the file starts with `---` on its
 * first line and the front matter closes with a `---` line; `name` is required; `description` is
 * trimmed; `model` and `effort` are strings; `tools` is a comma-separated string or a list
 * (trimmed, empty entries dropped); `lints` maps lint names to `allow`, `warn` or `deny`; every
 * other key is kept in `profile.extras` and has no effect; the body after the front matter is the
 * system prompt, verbatim. `kind` never comes from the file.
 *
 * Invariant: a file that breaks a rule is a `BlueprintError` naming the file, the line when the
 * YAML is at fault, and what was expected.
 */
import { parse as parseYaml, YAMLParseError } from "yaml";
import { BlueprintError } from "./errors.ts";
import { isObject, type Json } from "./path.ts";

/** What an `agent.md` declares (the agent's fields, without `kind` and `spec`). */
export interface AgentMd {
  /** The agent's name. */
  name: string;
  /** `system_prompt` (the body), `description`, `model`, `effort`, `tools`, `extras`. */
  profile: Record<string, Json>;
  /** Lint levels by lint name. */
  lints?: Record<string, "allow" | "warn" | "deny">;
}

/** Parses the text of an `agent.md` (`file` names it in errors). */
export function parseAgentMd(text: string, file: string): AgentMd {
  const bad = (why: string) => new BlueprintError(`${file}: ${why}`);
  const lines = text.split("\n");
  if (lines[0].replace(/\r$/, "") !== "---") throw bad("line 1: expected '---' opening the front matter");
  const close = lines.findIndex((l, i) => i > 0 && l.replace(/\r$/, "") === "---");
  if (close < 0) throw bad("the front matter is not closed by a '---' line");
  let front: unknown;
  try {
    front = parseYaml(lines.slice(1, close).join("\n"));
  } catch (e) {
    if (e instanceof YAMLParseError && e.linePos) {
      throw bad(`line ${e.linePos[0].line + 1}: ${e.message.split("\n")[0]}`);
    }
    throw bad(`the front matter is not YAML: ${(e as Error).message}`);
  }
  if (front === null || front === undefined) front = {};
  if (!isObject(front)) throw bad("the front matter must be a mapping of keys");
  const fm = front as Record<string, Json>;
  if (typeof fm.name !== "string" || fm.name.trim() === "") {
    throw bad("front matter: 'name' is required (a string)");
  }
  const profile: Record<string, Json> = { system_prompt: lines.slice(close + 1).join("\n") };
  const extras: Record<string, Json> = {};
  let lints: AgentMd["lints"];
  for (const [k, v] of Object.entries(fm)) {
    switch (k) {
      case "name":
        break;
      case "description":
        if (typeof v !== "string") throw bad("front matter: 'description' must be a string");
        profile.description = v.trim();
        break;
      case "model":
      case "effort":
        if (typeof v !== "string") throw bad(`front matter: '${k}' must be a string`);
        profile[k] = v;
        break;
      case "tools": {
        const list = typeof v === "string" ? v.split(",") : Array.isArray(v) ? v : undefined;
        if (!list || !list.every((t) => typeof t === "string")) {
          throw bad("front matter: 'tools' must be a comma-separated string or a list of strings");
        }
        profile.tools = (list as string[]).map((t) => t.trim()).filter((t) => t !== "");
        break;
      }
      case "lints": {
        if (!isObject(v)) throw bad("front matter: 'lints' must map lint names to allow, warn or deny");
        for (const [name, level] of Object.entries(v)) {
          if (level !== "allow" && level !== "warn" && level !== "deny") {
            throw bad(
              `front matter: lints.${name} must be allow, warn or deny, got ${JSON.stringify(level)}`,
            );
          }
        }
        lints = v as AgentMd["lints"];
        break;
      }
      default:
        extras[k] = v;
    }
  }
  if (Object.keys(extras).length > 0) profile.extras = extras;
  return { name: fm.name.trim(), profile, ...(lints ? { lints } : {}) };
}
