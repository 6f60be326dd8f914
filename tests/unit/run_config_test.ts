/** `--config` validation (src/config/run_config.ts `validateRunConfig`), pure: every error names the file and the field. */
import assert from "node:assert/strict";
import { validateRunConfig } from "../../src/config/run_config.ts";
import { AgentBlockError } from "../../src/errors.ts";

const F = "cfg/run.json";
const fails = (data: unknown, message: string) =>
  assert.throws(() => validateRunConfig(data, F), (e: unknown) => {
    assert.ok(e instanceof AgentBlockError);
    assert.equal((e as Error).message, message);
    return true;
  });

Deno.test("run config: every field, valid", () => {
  const all = {
    prompt: "p",
    context: "c",
    result: "out.txt",
    labels: { team: "a", run: "1" },
    cpu_limit_secs: 1.5,
    memory_limit_mb: 64,
    mcp_timeout_secs: 10,
    progress: true,
    events: "events.jsonl",
  };
  assert.deepEqual(validateRunConfig(all, F), all);
  assert.deepEqual(validateRunConfig({}, F), {});
});

Deno.test("run config: not an object", () => {
  fails([], `${F}: must be a JSON object, got array`);
  fails(null, `${F}: must be a JSON object, got null`);
  fails("x", `${F}: must be a JSON object, got string`);
  fails(3, `${F}: must be a JSON object, got number`);
});

Deno.test("run config: an unknown field is refused, naming it", () => {
  fails(
    { promt: "typo" },
    `${F}: unknown field 'promt' (known: prompt, context, result, outcome, labels, cpu_limit_secs, memory_limit_mb, mcp_timeout_secs, progress, events, relay, nats_creds, nats_nkey, nats_token_file, nats_tls_ca)`,
  );
});

Deno.test("run config: relay is a mesh URL", () => {
  assert.equal(
    validateRunConfig({ relay: "nats://h:4222,nats://g:4222" }, F).relay,
    "nats://h:4222,nats://g:4222",
  );
  fails({ relay: 1 }, `${F}: field 'relay' must be a string, got number`);
  fails(
    { relay: "ftp://x" },
    `${F}: field 'relay': unknown scheme 'ftp:', got 'ftp://x' (expected nats://host:port[,nats://host:port...] ` +
      `(tls:// for TLS), ws://host:port/ws or wss://host/ws)`,
  );
});

Deno.test("run config: string fields", () => {
  fails({ prompt: 1 }, `${F}: field 'prompt' must be a string, got number`);
  fails({ context: null }, `${F}: field 'context' must be a string, got null`);
  fails({ result: ["a"] }, `${F}: field 'result' must be a string, got array`);
});

Deno.test("run config: labels", () => {
  fails({ labels: "a=b" }, `${F}: field 'labels' must be an object, got string`);
  fails({ labels: ["a"] }, `${F}: field 'labels' must be an object, got array`);
  fails({ labels: null }, `${F}: field 'labels' must be an object, got null`);
  fails({ labels: { ok: "x", n: 1 } }, `${F}: field 'labels.n' must be a string, got number`);
});

Deno.test("run config: numeric fields", () => {
  fails({ cpu_limit_secs: 0 }, `${F}: field 'cpu_limit_secs' must be a positive number, got 0`);
  fails({ cpu_limit_secs: "1" }, `${F}: field 'cpu_limit_secs' must be a positive number, got string`);
  fails({ memory_limit_mb: -5 }, `${F}: field 'memory_limit_mb' must be a positive number, got -5`);
  fails({ mcp_timeout_secs: 1.5 }, `${F}: field 'mcp_timeout_secs' must be a positive integer, got 1.5`);
  fails({ mcp_timeout_secs: true }, `${F}: field 'mcp_timeout_secs' must be a positive integer, got boolean`);
});

Deno.test("run config: progress and events", () => {
  fails({ progress: "yes" }, `${F}: field 'progress' must be a boolean, got string`);
  fails({ progress: 1 }, `${F}: field 'progress' must be a boolean, got number`);
  fails({ events: "" }, `${F}: field 'events' must be a file path or "-", got ''`);
  fails({ events: true }, `${F}: field 'events' must be a file path or "-", got boolean`);
  assert.deepEqual(validateRunConfig({ progress: false, events: "-" }, F), { progress: false, events: "-" });
});

Deno.test("run config: the NATS credential fields are file names", () => {
  assert.deepEqual(
    validateRunConfig(
      { relay: "nats://h:4222", nats_creds: "a.creds", nats_nkey: "k", nats_token_file: "t" },
      F,
    ),
    { relay: "nats://h:4222", nats_creds: "a.creds", nats_nkey: "k", nats_token_file: "t" },
  );
  fails({ nats_tls_ca: 3 }, `${F}: field 'nats_tls_ca' must be a file path, got number`);
  fails({ nats_nkey: " " }, `${F}: field 'nats_nkey' must be a file path, got ''`);
});
