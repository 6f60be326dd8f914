/**
 * `examples/verify_echo_harness.lua` through the real CLI: over stdio (the script starts the
 * echo server) and over HTTP (`ECHO_MCP_URL`, server started here), exit code 0 and the OK line.
 */
import { join } from "node:path";
import { assertEquals, assertStringIncludes } from "./assert.ts";
import { REPO_ROOT, runCli } from "../../helpers.ts";
import { DENO, startEchoHttp } from "./peers.ts";

const HARNESS = join(REPO_ROOT, "examples/verify_echo_harness.lua");

Deno.test("verify_echo_harness.lua passes over stdio and over HTTP", async (t) => {
  await t.step("stdio", async () => {
    const r = await runCli(["-s", HARNESS, "--project", REPO_ROOT], { env: { DENO } });
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(r.stdout, "connected over stdio");
    assertStringIncludes(r.stdout, "VERIFY_ECHO_HARNESS_OK");
  });
  const http = await startEchoHttp();
  try {
    await t.step("HTTP", async () => {
      const r = await runCli(["-s", HARNESS, "--project", REPO_ROOT], { env: { ECHO_MCP_URL: http.url } });
      assertEquals(r.code, 0, r.stderr);
      assertStringIncludes(r.stdout, "connected over HTTP");
      assertStringIncludes(r.stdout, "VERIFY_ECHO_HARNESS_OK");
    });
  } finally {
    await http.stop();
  }
});
