/**
 * Support for the `agent-block serve` tests: a real manager as a subprocess (`startManager`),
 * its API called with its token (`Manager.api`), a raw HTTP/1.1 request for headers `fetch` will
 * not forge (`rawRequest`), and job projects written to disk (`jobProject`).
 *
 * Every manager listens on 127.0.0.1 port 0 with a short tick and its own `AGENT_BLOCK_HOME`;
 * tests wait on states the API reports (`waitFor`), never on elapsed time.
 */
import { join } from "node:path";
import { CLI, tempDir, waitFor, writeTree } from "../helpers.ts";

/** A running manager. */
export interface Manager {
  url: string;
  port: number;
  token: string;
  home: string;
  child: Deno.ChildProcess;
  /** What it wrote to stderr so far. */
  stderr(): string;
  /** `fetch` of `path` with the token; the JSON body (or text for non-JSON). */
  // deno-lint-ignore no-explicit-any
  api(path: string, init?: RequestInit): Promise<{ status: number; body: any }>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number>;
  /** SIGKILL, then the exit status. */
  kill(): Promise<Deno.CommandStatus>;
}

/** The `agent-block serve` command of the tests: `-p project`, port 0, a 100 ms tick, then `extra`. */
function managerCommand(
  project: string,
  home: string,
  extra: string[],
  env: Record<string, string>,
): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      CLI,
      "serve",
      "-p",
      project,
      "--bind",
      "127.0.0.1:0",
      "--tick",
      "100ms",
      ...extra,
    ],
    env: { NO_COLOR: "1", AGENT_BLOCK_HOME: home, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  });
}

/** Runs a manager expected to exit by itself (one refused at start); its exit code and stderr. */
export async function runManagerToExit(
  project: string,
  home: string,
  extra: string[] = [],
): Promise<{ code: number; stderr: string }> {
  const child = managerCommand(project, home, extra, {}).spawn();
  // bounded: a manager that does not refuse would serve forever, and is ended here instead
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
  }, 60_000);
  try {
    const out = await child.output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts `agent-block serve -p project` with `home` as its `AGENT_BLOCK_HOME` (and `env` added to
 * its small environment).
 */
export async function startManager(
  project: string,
  home: string,
  extra: string[] = [],
  env: Record<string, string> = {},
): Promise<Manager> {
  const child = managerCommand(project, home, extra, env).spawn();
  let text = "";
  const dec = new TextDecoder();
  const reading = (async () => {
    for await (const chunk of child.stderr) text += dec.decode(chunk, { stream: true });
  })();
  reading.catch(() => undefined);
  let status: Deno.CommandStatus | undefined;
  child.status.then((s) => status = s);
  await waitFor(() => /listening on http:\/\/[\d.]+:\d+/.test(text) || status !== undefined, {
    what: "the manager to listen",
    timeoutMs: 60_000,
  });
  const m = /listening on (http:\/\/[\d.]+:(\d+))/.exec(text);
  if (!m) throw new Error(`the manager did not start:\n${text}`);
  const token = Deno.readTextFileSync(join(home, "serve.token")).trim();
  const url = m[1];
  const mgr: Manager = {
    url,
    port: Number(m[2]),
    token,
    home,
    child,
    stderr: () => text,
    api: async (path, init = {}) => {
      const headers = new Headers(init.headers);
      if (!headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
      const r = await fetch(url + path, { ...init, headers });
      const body = await r.text();
      try {
        return { status: r.status, body: JSON.parse(body) };
      } catch {
        return { status: r.status, body };
      }
    },
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const s = await child.status;
      await reading;
      return s.code;
    },
    kill: async () => {
      child.kill("SIGKILL");
      const s = await child.status;
      await reading.catch(() => undefined);
      return s;
    },
  };
  return mgr;
}

/** A raw HTTP/1.1 GET to `port` with exactly `headers` (lines `Name: value`); status and body. */
export async function rawRequest(
  port: number,
  path: string,
  headers: string[],
): Promise<{ status: number; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const req = [`GET ${path} HTTP/1.1`, ...headers, "Connection: close", "", ""].join("\r\n");
    await conn.write(new TextEncoder().encode(req));
    let text = "";
    const buf = new Uint8Array(65536);
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
    return { status, body: text.slice(text.indexOf("\r\n\r\n") + 4) };
  } finally {
    try {
      conn.close();
    } catch { /* closed by the server */ }
  }
}

/** A fresh project with `files` and a fresh home; both removed when the test file ends. */
export async function jobProject(files: Record<string, string>): Promise<{ root: string; home: string }> {
  const root = await tempDir("ab_serve_");
  writeTree(root, files);
  const home = await tempDir("ab_serve_home_");
  return { root, home };
}

/**
 * A project whose job `wait` writes `<scratch>/started` when it runs, then waits until the test
 * writes `<scratch>/go`, and returns "done": a run the test ends when it chooses. `jobToml` is
 * put before the job's `prompt` line.
 */
export async function waitForGoProject(
  jobToml = "",
): Promise<{ root: string; home: string; scratch: string }> {
  const p = await jobProject({
    "blocks/wait.lua": `std.fs.write(_PROMPT .. "/started", "")
while not std.fs.exists(_PROMPT .. "/go") do std.task.sleep(0.05) end
return "done"
`,
  });
  const scratch = join(p.root, "scratch");
  Deno.mkdirSync(scratch);
  Deno.writeTextFileSync(join(p.root, "blocks/wait.job.toml"), `${jobToml}prompt = "${scratch}"\n`);
  return { ...p, scratch };
}

/**
 * Waits until run `id` has state `state` (any ended state when `state` is "ended"; "running" once
 * its process exists, so with its pid); the run.
 */
// deno-lint-ignore no-explicit-any
export async function waitForRun(m: Manager, id: string, state: string, timeoutMs = 60_000): Promise<any> {
  // deno-lint-ignore no-explicit-any
  let run: any;
  await waitFor(async () => {
    const r = await m.api(`/runs/${id}`);
    run = r.body;
    if (r.status !== 200) return false;
    if (state === "ended") return run.state !== "running";
    // A run is listed as running from its dispatch; its pid comes once its process exists.
    return run.state === state && (state !== "running" || typeof run.pid === "number");
  }, { what: `run ${id} to be ${state} (last seen: ${JSON.stringify(run)})`, timeoutMs });
  return run;
}

/** Waits until job `name` has had a run end; that run (from `GET /runs?job=`). */
// deno-lint-ignore no-explicit-any
export async function waitForEnd(m: Manager, name: string, timeoutMs = 60_000): Promise<any> {
  // deno-lint-ignore no-explicit-any
  let runs: any[] = [];
  await waitFor(async () => {
    const r = await m.api(`/runs?job=${name}`);
    runs = r.status === 200 ? r.body.runs : [];
    return runs.some((x) => x.state !== "running");
  }, { what: `a run of ${name} to end\n${m.stderr()}`, timeoutMs });
  return runs.find((x) => x.state !== "running");
}

/** A running `agent-block worker`. */
export interface Worker {
  child: Deno.ChildProcess;
  /** What it wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM (it drains), then the exit code. */
  stop(): Promise<number>;
  /** SIGKILL, then the exit status. */
  kill(): Promise<Deno.CommandStatus>;
}

/** The `agent-block worker` command of the tests (own `AGENT_BLOCK_HOME`, small environment). */
export function workerCommand(args: string[], home: string, env: Record<string, string> = {}): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CLI, "worker", ...args],
    env: { NO_COLOR: "1", AGENT_BLOCK_HOME: home, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  });
}

/** Starts `agent-block worker args...` and waits until it pulls. */
export async function startWorker(
  args: string[],
  home: string,
  env: Record<string, string> = {},
): Promise<Worker> {
  const child = workerCommand(args, home, env).spawn();
  let text = "";
  const dec = new TextDecoder();
  const reading = (async () => {
    for await (const chunk of child.stderr) text += dec.decode(chunk, { stream: true });
  })();
  reading.catch(() => undefined);
  let status: Deno.CommandStatus | undefined;
  child.status.then((s) => status = s);
  await waitFor(() => /agent-block worker: pulling /.test(text) || status !== undefined, {
    what: "the worker to pull",
    timeoutMs: 60_000,
  });
  if (status !== undefined) throw new Error(`the worker did not start:\n${text}`);
  return {
    child,
    stderr: () => text,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const s = await child.status;
      await reading;
      return s.code;
    },
    kill: async () => {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      const s = await child.status;
      await reading.catch(() => undefined);
      return s;
    },
  };
}

/** Runs a worker expected to exit by itself (one refused at start); its exit code and stderr. */
export async function runWorkerToExit(
  args: string[],
  home: string,
): Promise<{ code: number; stderr: string }> {
  const child = workerCommand(args, home).spawn();
  // bounded: a worker that does not refuse would pull forever, and is ended here instead
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
  }, 60_000);
  try {
    const out = await child.output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
  } finally {
    clearTimeout(timer);
  }
}
