/**
 * `examples/verify_echo_harness.lua` through the real CLI: over stdio (the script starts the
 * echo server) and over HTTP (`ECHO_MCP_URL`, server started here), exit code 0 and the OK line.
 */
import { join } from "node:path";
import assert from "node:assert/strict";
import { REPO_ROOT, runCli } from "../../helpers.ts";
import { DENO, startEchoHttp } from "./peers.ts";

const HARNESS = join(REPO_ROOT, "examples/verify_echo_harness.lua");

Deno.test("verify_echo_harness.lua passes over stdio and over HTTP", async (t) => {
  await t.step("stdio", async () => {
    const r = await runCli(["-s", HARNESS, "--project", REPO_ROOT], { env: { DENO } });
    assert.deepEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /connected over stdio/);
    assert.match(r.stdout, /VERIFY_ECHO_HARNESS_OK/);
  });
  const http = await startEchoHttp();
  try {
    await t.step("HTTP", async () => {
      const r = await runCli(["-s", HARNESS, "--project", REPO_ROOT], { env: { ECHO_MCP_URL: http.url } });
      assert.deepEqual(r.code, 0, r.stderr);
      assert.match(r.stdout, /connected over HTTP/);
      assert.match(r.stdout, /VERIFY_ECHO_HARNESS_OK/);
    });
  } finally {
    await http.stop();
  }
});
