/**
 * The GitHub Action's logic (action/run.sh) run locally, as action.yml runs it: `resolve` then
 * `run`, against a fake release on 127.0.0.1 whose "binary" is a wrapper running this checkout's
 * cli.ts, so the real run, its `--outcome` file and its exit codes drive the outputs. The
 * runner's files are fakes (GITHUB_OUTPUT, GITHUB_PATH, RUNNER_TOOL_CACHE, RUNNER_TEMP) read back
 * here: outputs in the delimiter form, annotations on stdout.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, tempDir, tempProject, testEnv } from "../helpers.ts";
import { BASE_VERSION } from "../../src/version.ts";
import { type FakeRelease, fakeRelease } from "./fake_release.ts";

const posix = Deno.build.os === "linux" || Deno.build.os === "darwin";
const hasJq = posix &&
  (await new Deno.Command("sh", { args: ["-c", "command -v jq"], stdout: "null" }).output().catch(() => ({
    success: false,
  }))).success;
if (posix && !hasJq) {
  console.error("action_test: skipping: jq is not installed (every GitHub-hosted runner has it)");
}

const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** The source CLI dressed as a release binary. */
const WRAPPER =
  `#!/bin/sh\nexec "${Deno.execPath()}" run -A --quiet --config "${REPO_ROOT}/deno.json" "${REPO_ROOT}/cli.ts" "$@"\n`;

/** Outputs written to a GITHUB_OUTPUT file (`name=value` and `name<<DELIM` forms). */
export function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!line) continue;
    const heredoc = line.match(/^([^=<]+)<<(.+)$/);
    if (heredoc) {
      const value: string[] = [];
      for (i++; lines[i] !== heredoc[2]; i++) {
        assert.ok(i < lines.length, `output ${heredoc[1]}: no closing ${heredoc[2]}`);
        value.push(lines[i]);
      }
      out[heredoc[1]] = value.join("\n");
    } else {
      const eq = line.indexOf("=");
      out[line.slice(0, eq)] = line.slice(eq + 1);
    }
  }
  return out;
}

interface Runner {
  rel: FakeRelease;
  root: string;
  workspace: string;
  /** Runs one phase; answers its exit code, stdout and the outputs it wrote. */
  phase(
    name: "resolve" | "run",
    inputs: Record<string, string>,
  ): Promise<{ code: number; stdout: string; stderr: string; outputs: Record<string, string> }>;
}

async function runner(files: Record<string, string> = {}): Promise<Runner> {
  const rel = await fakeRelease({ versions: { [BASE_VERSION]: WRAPPER }, latest: BASE_VERSION });
  const root = await tempDir("ab_action_");
  const workspace = await tempProject(files, "ab_action_ws_");
  for (const d of ["toolcache", "runner_temp"]) Deno.mkdirSync(join(root, d));
  let n = 0;
  return {
    rel,
    root,
    workspace,
    async phase(name, inputs) {
      const output = join(root, `output_${++n}.txt`);
      Deno.writeTextFileSync(output, "");
      const env: Record<string, string> = testEnv({
        NO_PROXY: "127.0.0.1,localhost",
        no_proxy: "127.0.0.1,localhost",
        GITHUB_OUTPUT: output,
        GITHUB_PATH: join(root, "path.txt"),
        GITHUB_RUN_ID: "4242",
        GITHUB_RUN_ATTEMPT: "1",
        RUNNER_TOOL_CACHE: join(root, "toolcache"),
        RUNNER_TEMP: join(root, "runner_temp"),
        INPUT_DOWNLOAD_URL: rel.url,
      });
      for (const [k, v] of Object.entries(inputs)) env[k] = v;
      const r = await new Deno.Command("/bin/sh", {
        args: [join(REPO_ROOT, "action", "run.sh"), name],
        cwd: workspace,
        env,
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
      }).output();
      return {
        code: r.code,
        stdout: dec(r.stdout),
        stderr: dec(r.stderr),
        outputs: parseOutputs(Deno.readTextFileSync(output)),
      };
    },
  };
}

const SCRIPTS = {
  "ok.lua": "return std.json.encode({ prompt = _PROMPT, context = _CONTEXT, script = _SCRIPT_NAME })\n",
  "defer.lua": 'job.defer("waiting for the nightly build")\n',
  "raise.lua": 'error("disk 100% full\\nsecond line", 0)\n',
  "commands.lua":
    'print("::error::forged by the block") print("::add-mask::x") error("::error::" .. _PROMPT, 0)\n',
};

Deno.test({
  name:
    "action: resolve finds the latest release; run installs it once (cached by version) and exposes result, outcome, exit-code",
  ignore: !hasJq,
  fn: async () => {
    const r = await runner(SCRIPTS);
    try {
      const resolved = await r.phase("resolve", { INPUT_VERSION: "latest" });
      assert.equal(resolved.code, 0, resolved.stderr + resolved.stdout);
      assert.equal(resolved.outputs.version, BASE_VERSION);
      const arch = dec((await new Deno.Command("uname", { args: ["-m"], stdout: "piped" }).output()).stdout)
        .trim();
      const dir = join(r.root, "toolcache", "agent-block", BASE_VERSION, arch);
      assert.equal(resolved.outputs.dir, dir);

      const inputs = {
        AB_VERSION: resolved.outputs.version,
        AB_DIR: resolved.outputs.dir,
        INPUT_SCRIPT: "ok.lua",
        INPUT_PROMPT: "two\nlines",
        INPUT_CONTEXT: "ctx",
        INPUT_ARGS: "--cpu-limit\n30\n",
      };
      const first = await r.phase("run", inputs);
      assert.equal(first.code, 0, first.stderr + first.stdout);
      assert.match(first.stdout, new RegExp(`agent-block ${BASE_VERSION}: installing into ${dir}`));
      assert.match(
        first.stdout,
        /agent-block --script=ok\.lua --project=\. --prompt=two\nlines --context=ctx --label action_run=gha-4242-1-[0-9a-f]{12} --result .* --cpu-limit 30/,
      );
      const o = first.outputs;
      assert.equal(o["exit-code"], "0");
      assert.equal(o.status, "returned");
      assert.deepEqual(JSON.parse(o.result), { prompt: "two\nlines", context: "ctx", script: "ok.lua" });
      const outcome = JSON.parse(o.outcome);
      assert.equal(outcome.status, "returned");
      assert.equal(outcome.value, o.result);
      assert.equal(Deno.readTextFileSync(o["result-file"]), o.result);
      assert.equal(Deno.readTextFileSync(join(r.root, "path.txt")), `${dir}\n`);
      const downloads = r.rel.requests.filter((q) => q.includes("/download/")).length;
      assert.ok(downloads >= 2, r.rel.requests.join("\n"));

      const second = await r.phase("run", inputs);
      assert.equal(second.code, 0, second.stderr);
      assert.match(
        second.stdout,
        new RegExp(`agent-block ${BASE_VERSION}: using the cached binary in ${dir}`),
      );
      assert.equal(
        r.rel.requests.filter((q) => q.includes("/download/")).length,
        downloads,
        "no second download",
      );
      assert.equal(second.outputs.result, o.result);
    } finally {
      await r.rel.close();
    }
  },
});

Deno.test({
  name: "action: exit 75 (job.defer) is a neutral outcome: the step passes with a notice annotation",
  ignore: !hasJq,
  fn: async () => {
    const r = await runner(SCRIPTS);
    try {
      const run = await r.phase("run", { INPUT_VERSION: BASE_VERSION, INPUT_SCRIPT: "defer.lua" });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.match(run.stdout, /^::notice title=agent-block deferred::waiting for the nightly build$/m);
      assert.doesNotMatch(run.stdout, /::error/);
      assert.equal(run.outputs["exit-code"], "75");
      assert.equal(run.outputs.status, "deferred");
      assert.deepEqual(JSON.parse(run.outputs.outcome), {
        version: 1,
        status: "deferred",
        reason: "waiting for the nightly build",
      });
      assert.equal(run.outputs.result, undefined, "a deferred run returned nothing");
    } finally {
      await r.rel.close();
    }
  },
});

Deno.test({
  name: "action: a raise fails the step with exit 1 and the error's message as an annotation",
  ignore: !hasJq,
  fn: async () => {
    const r = await runner(SCRIPTS);
    try {
      const run = await r.phase("run", { INPUT_VERSION: BASE_VERSION, INPUT_SCRIPT: "raise.lua" });
      assert.equal(run.code, 1, run.stdout);
      assert.match(
        run.stdout,
        /^::error title=agent-block failed \(exit 1\)::disk 100%25 full%0Asecond line$/m,
      );
      assert.equal(run.outputs["exit-code"], "1");
      assert.equal(run.outputs.status, "raised");
      assert.equal(JSON.parse(run.outputs.outcome).message, "disk 100% full\nsecond line");
      assert.equal(run.outputs.result, undefined);
    } finally {
      await r.rel.close();
    }
  },
});

Deno.test({
  name: "action: export-artifact exports the run's session (knl export); a run without one gets a warning",
  ignore: !hasJq,
  fn: async () => {
    const r = await runner({
      ...SCRIPTS,
      "blocks/hello_agent.lua": Deno.readTextFileSync(join(REPO_ROOT, "blocks", "hello_agent.lua")),
      "blocks/hello_agent.replay.jsonl": Deno.readTextFileSync(
        join(REPO_ROOT, "blocks", "hello_agent.replay.jsonl"),
      ),
    });
    try {
      const run = await r.phase("run", {
        INPUT_VERSION: BASE_VERSION,
        INPUT_BLOCK: "hello_agent",
        INPUT_EXPORT_ARTIFACT: "agent-run",
        INPUT_EXPORT_AS: "messages",
      });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.match(run.outputs.session, /^s_/);
      assert.equal(JSON.parse(run.outputs.result).session_id, run.outputs.session);
      const file = run.outputs["export-file"];
      assert.match(file, /\/agent-run\.jsonl$/);
      const lines = Deno.readTextFileSync(file).trim().split("\n").map((l) => JSON.parse(l));
      assert.ok(lines.some((m) => m.role === "assistant"), "the conversation is exported");
      assert.match(Deno.readTextFileSync(file), /word_count/);

      const plain = await r.phase("run", {
        INPUT_VERSION: BASE_VERSION,
        INPUT_SCRIPT: "ok.lua",
        INPUT_EXPORT_ARTIFACT: "x",
      });
      assert.equal(plain.code, 0, plain.stderr);
      assert.match(
        plain.stdout,
        /^::warning title=agent-block::the run recorded no session .*nothing to export$/m,
      );
      assert.equal(plain.outputs["export-file"], undefined);
    } finally {
      await r.rel.close();
    }
  },
});

Deno.test({
  name:
    "attack: action: a prompt starting with '-' is a value; workflow commands are stopped around the run; an export-artifact path is refused",
  ignore: !hasJq,
  fn: async () => {
    const r = await runner(SCRIPTS);
    try {
      const v = { INPUT_VERSION: BASE_VERSION };
      // an issue title such as "-h: help is wrong" is the prompt, not an option
      let run = await r.phase("run", { ...v, INPUT_SCRIPT: "ok.lua", INPUT_PROMPT: "-h: help is wrong" });
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.equal(JSON.parse(run.outputs.result).prompt, "-h: help is wrong");

      // what the block prints or raises is not taken for a workflow command
      run = await r.phase("run", { ...v, INPUT_SCRIPT: "commands.lua", INPUT_PROMPT: "::add-mask::y" });
      assert.equal(run.code, 1, run.stdout);
      const lines = run.stdout.split("\n");
      const stop = lines.findIndex((l) => /^::stop-commands::ab-pause-[0-9a-f]{32}$/.test(l));
      assert.ok(stop >= 0, run.stdout);
      const token = lines[stop].slice("::stop-commands::".length);
      const resume = lines.indexOf(`::${token}::`);
      const forged = lines.indexOf("::error::forged by the block");
      assert.ok(stop < forged && forged < resume, `the block's output is inside the pause:\n${run.stdout}`);
      assert.ok(lines.indexOf("::add-mask::x") < resume);
      // the action's own annotation comes after the pause, as a command
      const annotation = lines.findIndex((l) => l.startsWith("::error title=agent-block failed (exit 1)::"));
      assert.ok(annotation > resume, run.stdout);
      assert.equal(lines.filter((l) => l === `::${token}::`).length, 1, "nothing else ends the pause");

      // an artifact name is a name: no path out of the work directory
      for (const bad of ["../evil", "a/b", "..", "x..y", "a\\b"]) {
        run = await r.phase("run", { ...v, INPUT_SCRIPT: "ok.lua", INPUT_EXPORT_ARTIFACT: bad });
        assert.equal(run.code, 2, bad);
        assert.match(run.stdout, /^::error title=agent-block action::export-artifact must be a name/m, bad);
        assert.equal(run.outputs["exit-code"], undefined, `${bad}: nothing ran`);
      }
    } finally {
      await r.rel.close();
    }
  },
});

Deno.test({
  name: "action: wrong inputs and a bad command line fail with an error annotation; sandbox passes --sandbox",
  ignore: !hasJq,
  fn: async () => {
    const r = await runner(SCRIPTS);
    try {
      const v = { INPUT_VERSION: BASE_VERSION };
      let run = await r.phase("run", { ...v, INPUT_SCRIPT: "ok.lua", INPUT_BLOCK: "hello" });
      assert.equal(run.code, 2);
      assert.match(run.stdout, /^::error title=agent-block action::give block or script, not both$/m);
      run = await r.phase("run", v);
      assert.equal(run.code, 2);
      assert.match(
        run.stdout,
        /^::error title=agent-block action::give block \(a registered block's name\) or script/m,
      );
      run = await r.phase("run", { ...v, INPUT_SCRIPT: "ok.lua", INPUT_SANDBOX: "yes" });
      assert.equal(run.code, 2);
      assert.match(run.stdout, /sandbox must be true or false, got 'yes'/);
      run = await r.phase("resolve", { INPUT_VERSION: "1.0;rm -rf /" });
      assert.equal(run.code, 2);
      assert.match(run.stdout, /version must be 'latest' or a release version like 0\.2\.0/);
      // agent-block's own usage error: exit 2, no outcome (the run never started)
      run = await r.phase("run", { ...v, INPUT_SCRIPT: "ok.lua", INPUT_ARGS: "--no-such-flag" });
      assert.equal(run.code, 2);
      assert.equal(run.outputs["exit-code"], "2");
      assert.equal(run.outputs.status, "none");
      assert.match(
        run.stdout,
        /^::error title=agent-block failed \(exit 2\)::agent-block exited 2 before the run started/m,
      );
      // sandbox: the flag reaches agent-block (what it does with it is the sandbox's business)
      run = await r.phase("run", { ...v, INPUT_SCRIPT: "ok.lua", INPUT_SANDBOX: "true" });
      assert.match(run.stdout, /^agent-block --script=ok\.lua --project=\. --sandbox --label /m);
      assert.equal(run.outputs["exit-code"], String(run.code === 0 ? 0 : run.code));
    } finally {
      await r.rel.close();
    }
  },
});
