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
 *   read-only (`gitDirs`, `configPaths`), or — absent at the start, where no mount can cover it —
 *   is one the sweep after the run watches (`configAbsent`) or finds by name anywhere
 *   (`PROJECT_CONFIG`: a `.env`, which a nested project reads);
 * - in fact: a confined block tries to open each listed file for writing (append, nothing
 *   written; creating it where it is absent) on the root path and the user-namespace path, with
 *   the project's `.env` there and without one; every attempt on a file that exists fails,
 *   leaving it as it was, and every file the run could create is gone from its name once the run
 *   has ended (quarantined, said on stderr); and a repository it makes (`git init`, a name nothing
 *   can refuse) is no repository then: walking every write grant (`/tmp` at its top) finds no
 *   `.git` but the project's own, and no `.env` but the one that was there.
 * The list holds every place of `configCandidates` (what the launcher mounts or watches), so a new
 * configuration place is tried as soon as it is named there; one named only here that the run
 * could create and nothing sweeps fails both halves.
 * The starter's `HOME` is a directory of the test's (outside every grant), so the user's real
 * configuration is never the target.
 */
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { pathExists, tempDir, tempProject, testEnv } from "../helpers.ts";
import { outsideDir, sandboxedRun, SKIP } from "./support.ts";
import { userNamespaceHop } from "../../src/sandbox/mount_ns.ts";
import {
  configCandidates,
  PROJECT_CONFIG,
  resolvePolicy,
  sandboxRequest,
  SERVE_RECORD_FILES,
} from "../../src/sandbox/policy.ts";
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
  -- a directory of agent-block's: a file planted inside it
  if not f and tostring(err):find("Is a directory") then f, err = io.open(path .. "/planted", "a") end
  if f then f:close(); out[path] = "opened" else out[path] = "denied: " .. tostring(err) end
end
return std.json.encode(out)`;

const within = (root: string, p: string) => p === root || p.startsWith(root + "/");

/** Every file of the setup agent-block or git reads as configuration, code or a switch. */
function readLater(project: string, home: string, user: string): string[] {
  const listed = [
    join(project, ".env"),
    join(project, "nested", ".env"), // the root of a project a later run is started on
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
  // every place the launcher mounts or watches, itself where nothing listed lies inside it
  const places = configCandidates(project, home).filter((c) => !listed.some((t) => within(c, t)));
  return [...listed, ...places];
}

const PATHS = [
  { name: "root path", env: {} as Record<string, string>, skip: SKIP },
  { name: "user-namespace path", env: { AGENT_BLOCK_SANDBOX_TEST_USERNS: "1" }, skip: noHop },
];
const LAYOUTS = [
  { name: "", files: { ".env": "LOG_LEVEL=info\n" } as Record<string, string> },
  { name: ", no .env", files: {} as Record<string, string> },
];

for (const path of PATHS) {
  for (const layout of LAYOUTS) {
    Deno.test({
      name:
        `attack: sandbox no write grant holds configuration or code a later run reads (${path.name}${layout.name})`,
      ignore: path.skip !== undefined,
      sanitizeResources: false,
      sanitizeOps: false,
      fn: async () => {
        const project = await tempProject({ "try.lua": TRY, "nested/README": "", ...layout.files });
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
          const before = new Map(
            targets.map((
              t,
            ) => [t, pathExists(t) && !Deno.statSync(t).isDirectory ? Deno.readFileSync(t) : undefined]),
          );

          const r = await sandboxedRun(project, "try.lua", { env, prompt: JSON.stringify(targets) });
          assert.equal(r.code, 0, r.stderr);

          // structurally: every listed file inside a grant is under a read-only path of the policy,
          // or (absent at the start) a place the sweep watches or finds by name
          const policy = resolvePolicy(sandboxRequest(sandboxSettingsFromEnv(env, project), project));
          const readOnly = [...policy.gitDirs, ...policy.configPaths];
          const swept = (t: string) =>
            policy.configAbsent.includes(t) ||
            (PROJECT_CONFIG as readonly string[]).includes(basename(t).toLowerCase());
          for (const t of targets) {
            const real = pathExists(t) ? Deno.realPathSync(t) : t;
            const grant = policy.writable.find((w) => within(w.path, real));
            if (grant === undefined) continue;
            assert.ok(
              readOnly.some((p) => within(p, real)) || (before.get(t) === undefined && swept(t)),
              `${t} lies in the write grant ${grant.path} (${grant.source}) and nothing keeps it read-only or sweeps it`,
            );
          }
          for (const w of policy.writable) {
            assert.match(r.stderr, new RegExp(`writes only to [^\\n]*${w.path}`));
          }

          // in fact: every attempt on a file that was there failed and nothing changed; every file
          // the run could create is gone from its name (quarantined, and said)
          const made = (t: string) =>
            before.get(t) === undefined && SERVE_RECORD_FILES.some((n) => t === join(home, n));
          const isDir = (t: string) => pathExists(t) && Deno.statSync(t).isDirectory;
          for (const t of targets) {
            const now = pathExists(t) && !isDir(t) ? Deno.readFileSync(t) : undefined;
            if (r.value[t] === "opened" && before.get(t) === undefined) {
              assert.ok(swept(t), `${t} could be created`);
              assert.equal(now, undefined, `${t}: created by the run and left at its name`);
              assert.match(r.stderr, new RegExp(`quarantined ${t.replaceAll("/", "\\/")} as `));
              continue;
            }
            assert.match(r.value[t] ?? "", /^denied: /, `${t}: ${r.value[t]}`);
            if (isDir(t)) {
              assert.equal(pathExists(join(t, "planted")), false, `${t}: a file was planted in it`);
              continue;
            }
            // the launcher creates serve's record files empty where absent, so the mount covers them
            assert.deepEqual(now, made(t) ? new Uint8Array() : before.get(t), `${t} changed`);
          }
          assert.match(r.stderr, /quarantined [^\n]*\/nested\/\.git as /);
          const found: string[] = [];
          const walk = (dir: string, deep: boolean) => {
            for (const e of Deno.readDirSync(dir)) {
              const p = join(dir, e.name);
              if (e.name === ".git" || e.name === "HEAD") found.push(p);
              else if (
                !e.isDirectory && (PROJECT_CONFIG as readonly string[]).includes(e.name.toLowerCase())
              ) {
                found.push(p);
              } else if (deep && e.isDirectory && !e.isSymlink) walk(p, deep);
            }
          };
          for (const w of policy.writable) if (w.dir) walk(w.path, w.source !== "tmp");
          const kept = [
            join(project, ".git"),
            ...(before.get(join(project, ".env")) ? [join(project, ".env")] : []),
          ];
          assert.deepEqual(
            found.filter((p) => !kept.includes(p)),
            [],
            "a repository or a .env is left in a grant",
          );
        } finally {
          Deno.removeSync(user, { recursive: true });
          if (!etcBefore && pathExists("/etc/gitconfig")) Deno.removeSync("/etc/gitconfig");
        }
      },
    });
  }
}
