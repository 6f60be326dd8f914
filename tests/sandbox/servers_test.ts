/**
 * The sandbox through the servers: `agent-block mcp --sandbox` hands it to every run (the run's
 * writes outside the grants fail, the call's result says `agent-block/sandboxed: true` in its
 * `_meta`, a `.env` one run writes is quarantined and, renamed back, does not widen the next, and a
 * kernel without Landlock stops the server at start); `agent-block serve` runs a job whose
 * `job.toml` says `sandbox = true` under it, and its record says which runs were.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathExists, runCli, testEnv } from "../helpers.ts";
import { connectStdio, freshProject, resultText } from "../mcp_server/mcp_helpers.ts";
import { jobProject, startManager, waitForEnd } from "../serve/serve_helpers.ts";
import { parseJobFile } from "../../src/serve/job_file.ts";
import { SANDBOXED_META } from "../../src/mcp_server/server.ts";
import { outsideDir, SKIP } from "./support.ts";
import { sdkClient, sendRequest, startA2aServer } from "../a2a/a2a_helpers.ts";
import { SANDBOXED_META as A2A_SANDBOXED_META } from "../../src/a2a_server/agent.ts";

const opts = { ignore: SKIP !== undefined, sanitizeResources: false, sanitizeOps: false };

/** A block that tries to write `<_PROMPT>/escaped.txt` and says what happened. */
const TRY_WRITE = `local f, err = io.open(_PROMPT .. "/escaped.txt", "w")
if f then f:write("x"); f:close(); return "wrote" end
return "denied: " .. tostring(err)`;

Deno.test({
  name: "sandbox: agent-block mcp --sandbox runs every block confined, and the result says so",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    Deno.writeTextFileSync(join(p.root, "blocks", "try_write.lua"), TRY_WRITE);
    const outside = outsideDir();
    try {
      for (const sandbox of [true, false]) {
        const s = await connectStdio(p.root, p.home, { extraArgs: sandbox ? ["--sandbox"] : [] });
        try {
          const r = await s.client.callTool({
            name: "run_block",
            arguments: { block: "try_write", prompt: outside },
          });
          assert.equal(r._meta?.[SANDBOXED_META], sandbox, JSON.stringify(r));
          if (sandbox) {
            assert.match(resultText(r), /^denied: .*Permission denied/);
            assert.match(s.stderr(), /sandboxed runs/);
            assert.match(s.stderr(), /\(sandboxed\)/);
            assert.throws(() => Deno.statSync(join(outside, "escaped.txt")), Deno.errors.NotFound);
            assert.throws(() => Deno.statSync(join(outside, "open.txt")), Deno.errors.NotFound);
          } else {
            assert.equal(resultText(r), "wrote"); // the same block, unconfined: the test can fail
            Deno.removeSync(join(outside, "escaped.txt"));
          }
        } finally {
          await s.close();
        }
      }
    } finally {
      Deno.removeSync(outside, { recursive: true });
    }
  },
});

Deno.test({
  name: "attack: sandbox one run_block call of agent-block mcp --sandbox widens the next through .env",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    Deno.writeTextFileSync(join(p.root, "blocks", "try_write.lua"), TRY_WRITE);
    const outside = outsideDir();
    Deno.writeTextFileSync(
      join(p.root, "blocks", "plant.lua"),
      `local f = assert(io.open(".env", "a"))
f:write("AGENT_BLOCK_SANDBOX=0\\nAGENT_BLOCK_SANDBOX_FS_RW=" .. _PROMPT .. "\\nAGENT_BLOCK_SANDBOX_GIT_RW=1\\n")
f:close()
return "planted"`,
    );
    try {
      const s = await connectStdio(p.root, p.home, { extraArgs: ["--sandbox"] });
      try {
        const first = await s.client.callTool({
          name: "run_block",
          arguments: { block: "plant", prompt: outside },
        });
        assert.equal(resultText(first), "planted", JSON.stringify(first));
        // the sweep after the run quarantined the new .env (config_sweep_attack_test.ts); renamed
        // back unread, it still cannot widen the next run
        const aside = [...Deno.readDirSync(p.root)].find((e) =>
          e.name.startsWith(".env.agent-block-quarantined-")
        );
        assert.ok(aside, "the planted .env is quarantined");
        assert.equal(pathExists(join(p.root, ".env")), false);
        Deno.renameSync(join(p.root, aside.name), join(p.root, ".env"));
        assert.match(Deno.readTextFileSync(join(p.root, ".env")), /AGENT_BLOCK_SANDBOX_FS_RW=/);
        const second = await s.client.callTool({
          name: "run_block",
          arguments: { block: "try_write", prompt: outside },
        });
        assert.equal(second._meta?.[SANDBOXED_META], true, JSON.stringify(second));
        assert.match(resultText(second), /^denied: .*Permission denied/);
        assert.throws(() => Deno.statSync(join(outside, "escaped.txt")), Deno.errors.NotFound);
      } finally {
        await s.close();
      }
    } finally {
      Deno.removeSync(outside, { recursive: true });
    }
  },
});

Deno.test({
  name: "sandbox: agent-block mcp --sandbox on a kernel without Landlock stops at start",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    const env = testEnv({ AGENT_BLOCK_HOME: p.home, AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI: "0" });
    const r = await runCli(["mcp", "--sandbox", "-p", p.root], { cwd: p.root, env, stdin: "" });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^error: mcp: --sandbox: this kernel enforces no Landlock/);
  },
});

Deno.test("sandbox: job.toml's sandbox is a boolean, default off", () => {
  const job = (text: string) => parseJobFile("j", "/p/blocks/j.lua", "/p/blocks/j.job.toml", text);
  const on = job("sandbox = true\n");
  const off = job("sandbox = false\n");
  const none = job("");
  assert.ok("job" in on && "job" in off && "job" in none);
  assert.deepEqual(on.job, { ...none.job, sandbox: true });
  assert.deepEqual(off.job, none.job);
  const bad = job('every = "1h"\nsandbox = "yes"\n');
  assert.ok("error" in bad);
  assert.equal(bad.error.line, 2);
  assert.match(bad.error.message, /'sandbox' must be true or false, got "yes"/);
});

Deno.test({
  name:
    "sandbox: agent-block serve runs a sandbox = true job confined, its record says so, and every other job runs confined too",
  ...opts,
  fn: async () => {
    const outside = outsideDir();
    try {
      const p = await jobProject({
        "blocks/boxed.lua": TRY_WRITE,
        "blocks/boxed.job.toml": `every = "1h"\nsandbox = true\nprompt = "${outside}"\n`,
        "blocks/open.lua": TRY_WRITE.replace("escaped.txt", "open.txt"),
        "blocks/open.job.toml": `every = "1h"\nprompt = "${outside}"\n`,
      });
      const m = await startManager(p.root, p.home);
      try {
        const boxed = await waitForEnd(m, "boxed");
        assert.equal(boxed.state, "ok", JSON.stringify(boxed));
        assert.equal(boxed.sandboxed, true);
        assert.match(boxed.result, /^denied: .*Permission denied/);
        // the manager keeps the sandbox once seen: a confined run may write the other jobs' files
        const open = await waitForEnd(m, "open");
        assert.equal(open.sandboxed, true);
        assert.match(open.result, /^denied: .*Permission denied/);
        assert.match(m.stderr(), /job boxed is sandboxed: every run of every job is sandboxed from now on/);
        const jobs = (await m.api("/jobs")).body.jobs;
        assert.deepEqual(jobs.map((j: { name: string; sandbox: boolean }) => [j.name, j.sandbox]), [
          ["boxed", true],
          ["open", false],
        ]);
      } finally {
        await m.stop();
      }
      assert.throws(() => Deno.statSync(join(outside, "escaped.txt")), Deno.errors.NotFound);
      assert.throws(() => Deno.statSync(join(outside, "open.txt")), Deno.errors.NotFound);
    } finally {
      Deno.removeSync(outside, { recursive: true });
    }
  },
});

Deno.test({
  name: "sandbox: agent-block a2a serve --sandbox runs every block confined, and the task says so",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    Deno.writeTextFileSync(join(p.root, "blocks", "try_write.lua"), TRY_WRITE);
    const outside = outsideDir();
    try {
      for (const sandbox of [true, false]) {
        const server = await startA2aServer(p.root, p.home, sandbox ? ["--sandbox"] : []);
        try {
          const client = await sdkClient(server.url, "JSONRPC");
          let meta: Record<string, unknown> | undefined;
          let text = "";
          for await (const ev of client.sendMessageStream(sendRequest(outside, "try_write"))) {
            const pl = ev.payload;
            if (pl?.$case === "statusUpdate" && pl.value.metadata) meta = pl.value.metadata;
            if (pl?.$case === "artifactUpdate" && pl.value.artifact?.name === "result") {
              const c = pl.value.artifact.parts[0]?.content;
              text = c?.$case === "text" ? c.value : "";
              assert.equal(pl.value.artifact.metadata?.[A2A_SANDBOXED_META], sandbox);
            }
          }
          assert.equal(meta?.[A2A_SANDBOXED_META], sandbox);
          if (sandbox) {
            assert.match(text, /^denied: .*Permission denied/);
            assert.match(server.stderr(), /sandboxed runs/);
            assert.throws(() => Deno.statSync(join(outside, "escaped.txt")), Deno.errors.NotFound);
          } else {
            assert.equal(text, "wrote"); // the same block, unconfined: the test can fail
            Deno.removeSync(join(outside, "escaped.txt"));
          }
        } finally {
          await server.stop();
        }
      }
    } finally {
      Deno.removeSync(outside, { recursive: true });
    }
  },
});
