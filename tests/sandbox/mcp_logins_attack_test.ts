/**
 * The MCP token store under `--sandbox`: `$AGENT_BLOCK_HOME/mcp-auth` holds logins a later
 * unconfined run trusts, and the home is writable to a sandboxed run, so the launcher mounts the
 * store read-only. A sandboxed block can neither replace a login nor plant one, and can still
 * use a stored login (a refresh it makes lives in its memory; the file is left as it was).
 * Real runs under the sandbox, a real authorization server and MCP server on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir, writeTree } from "../helpers.ts";
import { sandboxedRun, sandboxEnv, SKIP } from "./support.ts";
import { approveInBrowser, startOAuthWorld } from "../fixtures/mcp/oauth_world.ts";
import { login } from "../../src/clients/mcp/oauth/login.ts";

if (SKIP) console.warn(`mcp_logins_attack_test: skipped: ${SKIP}`);

const PLANT = `
local dir = _PROMPT
local out = {}
local function try(what, f) local ok, err = f(); out[#out + 1] = what .. ": " .. (ok and "DONE" or tostring(err)) end
try("plant", function() local f, e = io.open(dir .. "/0123456789abcdef0123456789abcdef.json", "w"); if not f then return false, e end; f:write("{}"); f:close(); return true end)
for name in sh.exec("ls " .. dir).stdout:gmatch("[^\\n]+") do
  if name:match("%.json$") then
    try("overwrite", function() local f, e = io.open(dir .. "/" .. name, "w"); if not f then return false, e end; f:write("{}"); f:close(); return true end)
    try("remove", function() return os.remove(dir .. "/" .. name) end)
  end
end
try("rename-in", function()
  local f = io.open(_PROMPT .. "/../../planted.json", "w"); f:write("{}"); f:close()
  return os.rename(_PROMPT .. "/../../planted.json", dir .. "/ffffffffffffffffffffffffffffffff.json")
end)
return std.json.encode({ said = table.concat(out, "\\n") })
`;

/** Skips (returns true) where this user cannot have the read-only store and the start failed for it. */
function unprotectable(r: { code: number; stderr: string }): boolean {
  if (Deno.uid() === 0 || !/cannot be made read-only here/.test(r.stderr)) return false;
  console.warn(`skipped: this user cannot have a mount namespace here: ${r.stderr.trim()}`);
  return true;
}

Deno.test({
  name: "attack: sandbox a run can neither plant nor replace an MCP login (the token store is read-only)",
  ignore: SKIP !== undefined,
  fn: async () => {
    const w = await startOAuthWorld();
    try {
      const project = await tempDir("ab_sbx_logins_");
      const store = join(project, "home", "mcp-auth");
      await login({
        url: w.mcpUrl,
        storeDir: store,
        scope: "read",
        timeoutMs: 60_000,
        open: async (u) => void await approveInBrowser(u),
      });
      const [file] = [...Deno.readDirSync(store)].map((e) => join(store, e.name)).filter((p) =>
        p.endsWith(".json")
      );
      const before = Deno.readTextFileSync(file);
      writeTree(project, { "plant.lua": PLANT });
      const r = await sandboxedRun(project, "plant.lua", { prompt: store });
      if (unprotectable(r)) return;
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /agent-block config read-only/);
      const said = r.value.said;
      assert.doesNotMatch(said, /DONE/, said);
      assert.equal(said.match(/^(plant|overwrite|remove): .*Read-only file system$/gm)?.length, 3, said);
      // A rename into the store crosses into its own mount: refused too.
      assert.match(said, /^rename-in: .*(Read-only file system|Invalid cross-device link)$/m);
      assert.equal(Deno.readTextFileSync(file), before, "the login is as it was");
      assert.deepEqual([...Deno.readDirSync(store)].map((e) => e.name).filter((n) => n.endsWith(".json")), [
        file.slice(store.length + 1),
      ]);
    } finally {
      await w.close();
    }
  },
});

Deno.test({
  name: "attack: sandbox a run cannot plant the first MCP login into an empty store",
  ignore: SKIP !== undefined,
  fn: async () => {
    const project = await tempDir("ab_sbx_logins_");
    const store = join(project, "home", "mcp-auth");
    writeTree(project, { "plant.lua": PLANT });
    const r = await sandboxedRun(project, "plant.lua", { prompt: store });
    assert.equal(r.code, 0, r.stderr);
    if (/agent-block config WRITABLE/.test(r.stderr) && Deno.uid() !== 0) {
      console.warn("skipped: no mount namespace for this user here (the start-up line says so)");
      return;
    }
    assert.match(r.value.said, /plant: .*Read-only file system/);
    assert.deepEqual([...Deno.readDirSync(store)], []);
  },
});

Deno.test({
  name: "sandbox: a sandboxed run uses a stored MCP login and refreshes it in memory, leaving the file",
  ignore: SKIP !== undefined,
  fn: async () => {
    const w = await startOAuthWorld();
    try {
      const project = await tempDir("ab_sbx_logins_");
      const store = join(project, "home", "mcp-auth");
      await login({
        url: w.mcpUrl,
        storeDir: store,
        timeoutMs: 60_000,
        open: async (u) => void await approveInBrowser(u),
      });
      const [file] = [...Deno.readDirSync(store)].map((e) => join(store, e.name)).filter((p) =>
        p.endsWith(".json")
      );
      const before = Deno.readTextFileSync(file);
      w.expireAll();
      writeTree(project, {
        "use.lua": `mcp.connect_http("s", "${w.mcpUrl}")
local r = mcp.call("s", "whoami", {})
return std.json.encode({ ok = tostring(r.ok), text = r.ok and r.content[1].text or r.error })`,
      });
      const r = await sandboxedRun(project, "use.lua", { env: sandboxEnv(project) });
      if (unprotectable(r)) return;
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.value.ok, "true", r.value.text);
      assert.equal(w.grants.refresh_token, 1);
      assert.equal(Deno.readTextFileSync(file), before, "the store is not written from the sandbox");
    } finally {
      await w.close();
    }
  },
});
