/**
 * The sandbox's rule as an invariant: a confined run can write nothing that agent-block or git
 * later reads as configuration, code or a switch outside the sandbox.
 *
 * The test lists every such file of a realistic setup — the project's `.env` and `.git` (config,
 * hooks, HEAD), the run's home (`lib/`, `blocks/`, `serve.token`, `serve.sqlite`, a flow run's lock in
 * `flow-locks/`), the default home
 * of the user (`~/.agent-block`), git's user and system configuration — and holds two things:
 * - structurally: walking every write grant of the run's policy (`resolvePolicy`, the paths the
 *   start-up line names), each listed file inside a grant lies under a path the policy keeps
 *   read-only (`gitDirs`, `configPaths`);
 * - in fact: a confined block tries to open each listed file for writing (append, nothing
 *   written; creating it where it is absent) on the root path and the user-namespace path, and
 *   every attempt fails, leaving every file as it was; and a repository it makes (`git init`, a
 *   name nothing can refuse) is no repository once the run has ended: walking every write grant
 *   (`/tmp` at its top) finds no `.git` but the project's own.
 * The starter's `HOME` is a directory of the test's (outside every grant), so the user's real
 * configuration is never the target.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathExists, tempDir, tempProject, testEnv } from "../helpers.ts";
import { outsideDir, sandboxedRun, SKIP } from "./support.ts";
import { userNamespaceHop } from "../../src/sandbox/mount_ns.ts";
import { resolvePolicy, sandboxRequest, SERVE_RECORD_FILES } from "../../src/sandbox/policy.ts";
import { sandboxSettingsFromEnv } from "../../src/config/env_settings.ts";

const noHop = SKIP ?? (() => {
  const hop = userNamespaceHop();
  return "why" in hop ? hop.why : undefined;
})();
if (SKIP) console.warn(`invariant_attack_test: skipped: ${SKIP}`);

const TRY = `sh.exec("git init -q nested && git -C nested config core.fsmonitor true")
local out = {}
for _, path in ipairs(std.json.decode(_PROMPT)) do
  local f, err = io.open(path, "a")
  if f then f:close(); out[path] = "opened" else out[path] = "denied: " .. tostring(err) end
end
return std.json.encode(out)`;

const within = (root: string, p: string) => p === root || p.startsWith(root + "/");

/** Every file of the setup agent-block or git reads as configuration, code or a switch. */
function readLater(project: string, home: string, user: string): string[] {
  return [
    join(project, ".env"),
    join(project, ".git", "config"),
    join(project, ".git", "HEAD"),
    join(project, ".git", "hooks", "pre-commit"),
    join(project, ".git", "info", "attributes"),
    join(home, "lib", "planted.lua"),
    join(home, "blocks", "planted.lua"),
    join(home, "blocks", "planted", "job.toml"),
    join(home, "serve.token"),
    join(home, "serve.sqlite"),
    join(home, "serve.sqlite-wal"),
    join(home, "serve.sqlite-journal"),
    join(home, "flow-locks", "0123456789abcdef0123456789abcdef.lock"),
    join(user, ".agent-block", "lib", "planted.lua"),
    join(user, ".gitconfig"),
    join(user, ".config", "git", "config"),
    "/etc/gitconfig",
  ];
}

const PATHS = [
  { name: "root path", env: {} as Record<string, string>, skip: SKIP },
  { name: "user-namespace path", env: { AGENT_BLOCK_SANDBOX_TEST_USERNS: "1" }, skip: noHop },
];

for (const path of PATHS) {
  Deno.test({
    name: `attack: sandbox no write grant holds configuration or code a later run reads (${path.name})`,
    ignore: path.skip !== undefined,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const project = await tempProject({ "try.lua": TRY, ".env": "LOG_LEVEL=info\n" });
      const g = new Deno.Command("git", { args: ["init", "-q", project], stdout: "null", stderr: "null" })
        .outputSync();
      assert.ok(g.success, "git init");
      const home = await tempDir("ab_sbx_inv_home_");
      Deno.writeTextFileSync(join(home, "serve.token"), "token\n", { mode: 0o600 });
      Deno.writeTextFileSync(join(home, "serve.sqlite"), "");
      const user = outsideDir();
      const etcBefore = pathExists("/etc/gitconfig");
      try {
        const env = testEnv({ HOME: user, AGENT_BLOCK_HOME: home, ...path.env });
        const targets = readLater(project, home, user);
        const before = new Map(targets.map((t) => [t, pathExists(t) ? Deno.readFileSync(t) : undefined]));

        const r = await sandboxedRun(project, "try.lua", { env, prompt: JSON.stringify(targets) });
        assert.equal(r.code, 0, r.stderr);

        // structurally: every listed file inside a grant is under a read-only path of the policy
        const policy = resolvePolicy(sandboxRequest(sandboxSettingsFromEnv(env, project), project));
        const readOnly = [...policy.gitDirs, ...policy.configPaths];
        for (const t of targets) {
          const real = pathExists(t) ? Deno.realPathSync(t) : t;
          const grant = policy.writable.find((w) => within(w.path, real));
          if (grant === undefined) continue;
          assert.ok(
            readOnly.some((p) => within(p, real)),
            `${t} lies in the write grant ${grant.path} (${grant.source}) and nothing keeps it read-only`,
          );
        }
        for (const w of policy.writable) {
          assert.match(r.stderr, new RegExp(`writes only to [^\\n]*${w.path}`));
        }

        // in fact: every attempt failed and nothing changed
        for (const t of targets) {
          assert.match(r.value[t] ?? "", /^denied: /, `${t}: ${r.value[t]}`);
          const now = pathExists(t) ? Deno.readFileSync(t) : undefined;
          // the launcher creates serve's record files empty where absent, so the mount covers them
          const made = before.get(t) === undefined && SERVE_RECORD_FILES.some((n) => t === join(home, n));
          assert.deepEqual(now, made ? new Uint8Array() : before.get(t), `${t} changed`);
        }
        assert.match(r.stderr, /quarantined [^\n]*\/nested\/\.git as /);
        const found: string[] = [];
        const walk = (dir: string, deep: boolean) => {
          for (const e of Deno.readDirSync(dir)) {
            const p = join(dir, e.name);
            if (e.name === ".git" || e.name === "HEAD") found.push(p);
            else if (deep && e.isDirectory && !e.isSymlink) walk(p, deep);
          }
        };
        for (const w of policy.writable) if (w.dir) walk(w.path, w.source !== "tmp");
        assert.deepEqual(
          found.filter((p) => p !== join(project, ".git")),
          [],
          "a repository is left in a grant",
        );
      } finally {
        Deno.removeSync(user, { recursive: true });
        if (!etcBefore && pathExists("/etc/gitconfig")) Deno.removeSync("/etc/gitconfig");
      }
    },
  });
}
