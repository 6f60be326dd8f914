/** The `--config` file of `serve` and `worker` (src/config/nats_config.ts), pure: fields, types, unknown fields. */
import assert from "node:assert/strict";
import { validateNatsConfig } from "../../src/config/nats_config.ts";
import { AgentBlockError } from "../../src/errors.ts";

const F = "etc/worker.json";
const fails = (data: unknown, message: string) =>
  assert.throws(() => validateNatsConfig(data, F), (e: unknown) => {
    assert.ok(e instanceof AgentBlockError);
    assert.equal((e as Error).message, message);
    return true;
  });

Deno.test("nats config: the URL and the credential files, by a run config's field names", () => {
  const all = {
    nats: "nats://a:4222,nats://b:4222",
    nats_creds: "w.creds",
    nats_nkey: "w.seed",
    nats_token_file: "t",
    nats_tls_ca: "ca.pem",
  };
  assert.deepEqual(validateNatsConfig(all, F), all);
  assert.deepEqual(validateNatsConfig({}, F), {});
});

Deno.test("nats config: every error names the file and the field", () => {
  fails([], `${F}: must be a JSON object, got array`);
  fails(
    { relay: "nats://a:1" },
    `${F}: unknown field 'relay' (known: nats, nats_creds, nats_nkey, nats_token_file, nats_tls_ca)`,
  );
  fails({ nats: 4222 }, `${F}: field 'nats' must be a NATS URL (nats://host:port[,...]), got number`);
  fails({ nats_nkey: "" }, `${F}: field 'nats_nkey' must be a file path, got ''`);
  fails({ nats_tls_ca: null }, `${F}: field 'nats_tls_ca' must be a file path, got null`);
});
