/**
 * The mesh's replay memory against a confined run (issue 25): under `--sandbox` with a NATS
 * `--relay`, the memory (`<home>/mesh-seen/<project key>.sqlite`) is kept by the launcher and
 * read-only to the run, so nothing the run's children do makes a later run accept a captured
 * message again:
 * - run 1 (confined) is sent a signed message, which a party on the server captures; then its
 *   `sh.exec` child tries to delete, truncate, rewrite (sqlite3 `DELETE`) and move the memory,
 *   and to flood the launcher's socket with adds (found in any process's environment) — every
 *   write fails, the socket is gone (the launcher served the runtime only), and the id is still
 *   remembered;
 * - run 2 (confined again, within the freshness window) is sent the captured message: it is
 *   dropped as a replay, a new message is answered.
 * On the root path and on the user-namespace path. Skipped without Landlock, without
 * `nats-server`, or without `perl` (the flooding child).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { connect, type Msg } from "@nats-io/transport-node";
import { lacksProcessTools, runCli, settleWithin, tempProject, waitFor } from "../helpers.ts";
import { outsideDir, sandboxEnv, SKIP } from "./support.ts";
import { userNamespaceHop } from "../../src/sandbox/mount_ns.ts";
import { natsMissing, startNats } from "../mesh/nats_server.ts";
import { MeshIdentity } from "../../src/clients/mesh/identity.ts";
import { subjectOf } from "../../src/clients/mesh/nats_transport.ts";
import { connectMesh } from "../../src/clients/mesh/connect.ts";
import { meshSeenFile } from "../../src/clients/mesh/seen_ids.ts";

const NATS = natsMissing();
const PERL = lacksProcessTools("perl", "sqlite3");
const why = SKIP ?? NATS ?? PERL;
if (why) console.warn(`mesh_seen_attack_test: skipped: ${why}`);
const noHop = why ?? (() => {
  const hop = userNamespaceHop();
  return "why" in hop ? hop.why : undefined;
})();
const opts = { sanitizeResources: false, sanitizeOps: false };

const KEY_A = "a".repeat(64);
const KEY_B = "b".repeat(64);

const PATHS = [
  { name: "root path", env: {} as Record<string, string>, skip: why },
  { name: "user-namespace path", env: { AGENT_BLOCK_SANDBOX_TEST_USERNS: "1" }, skip: noHop },
];

/**
 * The confined agent: answers until told to stop, then (run 1: `_PROMPT` names the memory's file)
 * its child attacks the memory. Returns the payloads' `n` it saw and what the child printed.
 */
const AGENT = `
local seen = {}
mesh.on(function(ev)
  seen[#seen + 1] = ev.payload.n
  if ev.payload.stop then bus.stop() end
  return "ok"
end)
bus.serve()
local out = { seen = seen }
if _PROMPT ~= "" then
  local r = sh.exec("sh ./attack.sh '" .. _PROMPT .. "'", { timeout = 120 })
  out.attack = (r.stdout or "") .. (r.stderr or "")
end
return std.json.encode(out)
`;

/** The child's attack on the memory file `$1` (each step's outcome on a line of its own). */
const ATTACK_SH = `
f="$1"
try() { name="$1"; shift; if "$@" 2>/dev/null; then echo "$name: DONE"; else echo "$name: failed"; fi; }
try sqlite-delete sqlite3 "$f" "DELETE FROM seen"
try truncate sh -c ": > '$f'"
try remove rm -f "$f"
try remove-wal rm -f "$f-wal"
try plant-journal sh -c "echo x > '$f-journal'"
try move-dir mv "$(dirname "$f")" "$(dirname "$f").moved"
try remove-dir rm -rf "$(dirname "$f")"
perl ./flood.pl
`;

/**
 * The child's flood: every AGENT_BLOCK_MESH_SEEN_SOCKET/TOKEN it finds in a process's environment
 * (its own, or the runtime's /proc/<pid>/environ), connected to and sent 2000 adds of fresh ids.
 */
const FLOOD_PL = `
use strict; use IO::Socket::UNIX;
my %found;
for my $f ("/proc/self/environ", glob("/proc/[0-9]*/environ")) {
  open(my $h, "<", $f) or next; local $/; my $e = <$h>; close($h); next unless defined $e;
  my %v = map { split(/=/, $_, 2) } grep { /=/ } split(/\\0/, $e);
  $found{$v{AGENT_BLOCK_MESH_SEEN_SOCKET}} = $v{AGENT_BLOCK_MESH_SEEN_TOKEN} // "" if $v{AGENT_BLOCK_MESH_SEEN_SOCKET};
}
print "flood: found " . scalar(keys %found) . " socket(s)\\n";
for my $s (keys %found) {
  my $c = IO::Socket::UNIX->new(Peer => $s);
  if (!$c) { print "flood: connect refused ($!)\\n"; next; }
  print $c "$found{$s}\\n";
  my $now = time() * 1000;
  for my $i (1..2000) { printf $c "%08x-0000-4000-8000-%012x %d %d\\n", $$, $i, $now, $now; }
  $c->flush; shutdown($c, 1);
  my $answers = 0; $answers++ while <$c>;
  print "flood: ANSWERED $answers\\n";
}
`;

for (const path of PATHS) {
  Deno.test({
    name:
      `attack: sandbox a confined run's child cannot make the next run accept a captured mesh message (${path.name})`,
    ignore: path.skip !== undefined,
    ...opts,
    fn: async () => {
      await using srv = await startNats();
      const project = await tempProject({ "agent.lua": AGENT, "attack.sh": ATTACK_SH, "flood.pl": FLOOD_PL });
      // the home outside the project (its usual place): the run may write it, not rename it
      const home = outsideDir();
      const env = sandboxEnv(project, { AGENT_BLOCK_HOME: home, ...path.env });
      const memory = meshSeenFile(home, project);
      const result = join(project, "result.json");
      /** The last run's value (the script returns a JSON text). */
      const valueOf = () => {
        const v = JSON.parse(Deno.readTextFileSync(result));
        return typeof v === "string" ? JSON.parse(v) : v;
      };
      const a = MeshIdentity.fromSeedHex(KEY_A).agentId;
      const raw = await connect({ servers: srv.url.replace("nats://", "") });
      const b = await connectMesh(srv.url, MeshIdentity.fromSeedHex(KEY_B));
      const run = (prompt: string) =>
        runCli(
          [
            "--sandbox",
            ...["-s", "agent.lua", "-p", project, "--result", result, "--prompt", prompt],
            ...["--relay", srv.url, "--secret-key", KEY_A],
          ],
          { cwd: project, env },
        );
      /** Asks `a` until a run of it listens (a run starting), then returns the reply. */
      const ask = async (payload: unknown) => {
        for (let i = 0;; i++) {
          try {
            return (await b.request(a, payload, { timeoutMs: 30_000 })).value;
          } catch (e) {
            if ((e as { kind?: string }).kind !== "unreachable" || i > 4000) throw e;
            await new Promise((r) => setTimeout(r, 25));
          }
        }
      };
      const captured: Msg[] = [];
      const runs: Promise<unknown>[] = [];
      try {
        const first = run(memory);
        runs.push(first);
        assert.equal(await ask({ n: 0 }), "ok"); // run 1 listens
        const tap = raw.subscribe(subjectOf(a), { callback: (_e, m) => void captured.push(m) });
        await raw.flush();
        assert.equal(await ask({ n: 1, stop: true }), "ok");
        const r1 = await first;
        assert.equal(r1.code, 0, r1.stderr);
        await waitFor(() => captured.length === 1, { what: "the message to be captured" });
        tap.unsubscribe();
        await raw.flush();
        const out1 = valueOf();
        const replayed = JSON.parse(new TextDecoder().decode(captured[0].data)).id;

        // every write of the child failed; its flood reached nothing
        const attack = String(out1.attack);
        for (
          const step of ["sqlite-delete", "truncate", "remove", "remove-wal", "plant-journal", "move-dir"]
        ) {
          assert.match(attack, new RegExp(`^${step}: failed$`, "m"), `${step}:\n${attack}\n${r1.stderr}`);
        }
        assert.doesNotMatch(attack, /ANSWERED [1-9]/, attack);
        assert.doesNotMatch(attack, /DONE/, attack);
        // the memory is where it was, and still holds the captured id (the launcher wrote it)
        const db = new DatabaseSync(memory, { readOnly: true });
        try {
          const row = db.prepare("SELECT id FROM seen WHERE id = ?").get(replayed);
          assert.ok(row, `${replayed} is not in ${memory}`);
          const n = Number((db.prepare("SELECT count(*) AS n FROM seen").get() as { n: number }).n);
          assert.equal(n, 2, "only the two messages run 1 accepted are remembered (no flooded id)");
        } finally {
          db.close();
        }

        // run 2, confined, within the window: the replay is dropped, a new message is answered
        const second = run("");
        runs.push(second);
        assert.equal(await ask({ n: 2 }), "ok");
        await assert.rejects(
          () => raw.request(subjectOf(a), captured[0].data, { headers: captured[0].headers, timeout: 1500 }),
          "the replay is never answered",
        );
        assert.equal(await ask({ n: 3, stop: true }), "ok");
        const r2 = await second;
        assert.equal(r2.code, 0, r2.stderr);
        const out2 = valueOf();
        assert.deepEqual(out2.seen, [2, 3], "the replayed message reached no handler");
        assert.match(r2.stderr, new RegExp(`dropped a message .*replayed id ${replayed}`));
      } finally {
        await settleWithin(runs, "the confined runs", 120_000);
        await settleWithin([b.close(), raw.close()], "the connections");
        await Deno.remove(home, { recursive: true }).catch(() => undefined);
      }
    },
  });
}
