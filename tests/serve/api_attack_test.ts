/**
 * The manager's HTTP API at its boundary (issue 16 §2): no token or a wrong one is 401 with no
 * detail; a forged `Host` or a foreign `Origin` is 403 whatever the token; bad ids, limits and
 * routes get their stable error codes; the token file is 0600 and 256 bits.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { jobProject, type Manager, rawRequest, startManager } from "./serve_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function withManager(fn: (m: Manager) => Promise<void>): Promise<void> {
  const p = await jobProject({ "blocks/one.lua": "return 1", "blocks/one.job.toml": "" });
  const m = await startManager(p.root, p.home);
  try {
    await fn(m);
  } finally {
    assert.equal(await m.stop(), 0);
  }
}

Deno.test({
  name: "attack: the serve API without a token or with a wrong one is 401 with no detail",
  ...opts,
  fn: () =>
    withManager(async (m) => {
      const mode = Deno.statSync(join(m.home, "serve.token")).mode! & 0o777;
      assert.equal(mode, 0o600);
      assert.match(m.token, /^[0-9a-f]{64}$/);
      for (
        const auth of ["", "Bearer", `Bearer ${m.token}x`, `Bearer ${m.token.slice(1)}`, `Basic ${m.token}`]
      ) {
        for (
          const [path, method] of [["/jobs", "GET"], ["/runs", "GET"], ["/jobs/one/runs", "POST"], [
            "/metrics",
            "GET",
          ]]
        ) {
          const r = await m.api(path, { method, headers: { authorization: auth } });
          assert.deepEqual([r.status, r.body], [401, { error: "unauthorized" }], `${auth} ${method} ${path}`);
        }
      }
      // Nothing was asked for by the refused POSTs.
      assert.equal((await m.api("/jobs")).body.jobs[0].requested_run, null);
    }),
});

Deno.test({
  name: "attack: a forged Host or a foreign Origin is 403 even with the token",
  ...opts,
  fn: () =>
    withManager(async (m) => {
      const auth = `Authorization: Bearer ${m.token}`;
      const ok = await rawRequest(m.port, "/jobs", [`Host: 127.0.0.1:${m.port}`, auth]);
      assert.equal(ok.status, 200);
      assert.equal((await rawRequest(m.port, "/jobs", [`Host: localhost:${m.port}`, auth])).status, 200);
      for (const host of ["evil.example", `evil.example:${m.port}`, "127.0.0.1.evil.example", "10.0.0.1"]) {
        const r = await rawRequest(m.port, "/jobs", [`Host: ${host}`, auth]);
        assert.equal(r.status, 403, host);
        assert.equal(JSON.parse(r.body).error, "forbidden");
      }
      for (const origin of ["http://evil.example", "null", "http://127.0.0.1.evil.example", "file://"]) {
        const r = await rawRequest(m.port, "/jobs", [`Host: 127.0.0.1:${m.port}`, `Origin: ${origin}`, auth]);
        assert.equal(r.status, 403, origin);
      }
      // A forged Host without a token is refused as forged (403), telling nothing about tokens.
      assert.equal((await rawRequest(m.port, "/jobs", ["Host: evil.example"])).status, 403);
    }),
});

Deno.test({
  name: "attack: bad run ids, job names, limits and routes get their stable errors",
  ...opts,
  fn: () =>
    withManager(async (m) => {
      const expect = async (path: string, method: string, status: number, error: string) => {
        const r = await m.api(path, { method });
        assert.deepEqual([r.status, r.body.error], [status, error], `${method} ${path}`);
      };
      await expect("/runs/nope", "GET", 404, "unknown_run");
      await expect("/runs/%2e%2e%2f%2e%2e%2fserve.token", "GET", 404, "unknown_run");
      await expect("/runs/%ZZ", "GET", 404, "unknown_run");
      await expect(`/runs/${"a".repeat(5000)}`, "GET", 404, "unknown_run");
      await expect("/runs/nope", "DELETE", 404, "unknown_run");
      await expect("/jobs/nope/runs", "POST", 404, "unknown_job");
      await expect("/jobs/..%2fone/runs", "POST", 404, "unknown_job");
      await expect("/runs?job=nope", "GET", 404, "unknown_job");
      for (const limit of ["0", "-1", "abc", "1001", "1e3", "", "99999"]) {
        await expect(`/runs?limit=${limit}`, "GET", 400, "bad_limit");
      }
      await expect("/runs?limit=1000", "GET", 200, undefined as unknown as string);
      await expect("/nothing", "GET", 404, "not_found");
      await expect("/jobs", "POST", 405, "method_not_allowed");
      await expect("/jobs/one/runs", "GET", 405, "method_not_allowed");
      const big = await m.api("/jobs/one/runs", { method: "POST", body: "x".repeat(70 * 1024) });
      assert.deepEqual([big.status, big.body.error], [413, "payload_too_large"]);
    }),
});
