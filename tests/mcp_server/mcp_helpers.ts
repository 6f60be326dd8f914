/**
 * Helpers for the `agent-block mcp` tests: a fresh copy of the fixture project per test, real
 * server processes (stdio through the v2 SDK client, HTTP from the CLI), and process probes.
 *
 * Waits are event-based or bounded polls on a condition (a file appears, a pid is gone) with
 * generous deadlines — never a sleep standing in for synchronisation.
 */
import nodeAssert from "node:assert/strict";
import { join } from "node:path";
import { Client, type ClientOptions } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { CLI, REPO_ROOT, waitFor } from "../helpers.ts";

export const FIXTURE = join(REPO_ROOT, "tests", "fixtures", "mcp_project");
export const DENO_CONFIG = join(REPO_ROOT, "deno.json");

/** The command that starts the server (`mcp`, or another such as `a2a serve`) from source. */
export function serverCommand(args: string[], command = "mcp"): [string, ...string[]] {
  return [
    Deno.execPath(),
    "run",
    "-A",
    "--quiet",
    "--config",
    DENO_CONFIG,
    CLI,
    ...command.split(" "),
    ...args,
  ];
}

function copyDir(from: string, to: string): void {
  Deno.mkdirSync(to, { recursive: true });
  for (const e of Deno.readDirSync(from)) {
    const a = join(from, e.name);
    const b = join(to, e.name);
    if (e.isDirectory) copyDir(a, b);
    else Deno.copyFileSync(a, b);
  }
}

/**
 * A fresh copy of the fixture project in a temp dir, plus a project-local block
 * (`.agent-block/blocks/where.lua`, which git would not carry) and an empty `home` for
 * `AGENT_BLOCK_HOME`.
 */
export async function freshProject(): Promise<{ root: string; home: string; scratch: string }> {
  const base = await Deno.makeTempDir({ prefix: "ab_mcp_test_" });
  const root = join(base, "project");
  copyDir(FIXTURE, root);
  Deno.mkdirSync(join(root, ".agent-block", "blocks"), { recursive: true });
  Deno.writeTextFileSync(
    join(root, ".agent-block", "blocks", "where.lua"),
    '-- Says which tier it came from: this project-local copy wins over blocks/where.lua.\nreturn "project-local"\n',
  );
  const home = join(base, "home");
  Deno.mkdirSync(join(home, "blocks"), { recursive: true });
  const scratch = join(base, "scratch");
  Deno.mkdirSync(scratch);
  return { root, home, scratch };
}

/** The server's environment: ours, with the test's home. */
export function serverEnv(home: string): Record<string, string> {
  return { ...Deno.env.toObject(), AGENT_BLOCK_HOME: home, NO_COLOR: "1", AGENT_BLOCK_LOG: "debug" };
}

/** A connected v2 SDK client over stdio and everything the server wrote to stderr. */
export interface StdioSession {
  client: Client;
  /** The server process's pid (to signal it). */
  pid: number;
  stderr: () => string;
  close: () => Promise<void>;
}

/** Starts `agent-block mcp` over stdio and connects a v2 client (`era`: legacy or auto). */
export async function connectStdio(
  projectRoot: string,
  home: string,
  opts: {
    era?: "legacy" | "auto";
    extraArgs?: string[];
    clientOptions?: ClientOptions;
    /** More variables of the server's environment. */
    env?: Record<string, string>;
  } = {},
): Promise<StdioSession> {
  const [command, ...args] = serverCommand(["-p", projectRoot, ...(opts.extraArgs ?? [])]);
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...serverEnv(home), ...opts.env },
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (d: Uint8Array | string) => {
    err += typeof d === "string" ? d : new TextDecoder().decode(d);
  });
  const client = new Client(
    { name: "agent-block-test", version: "0" },
    {
      ...(opts.era === "auto" ? { versionNegotiation: { mode: "auto" as const } } : {}),
      ...opts.clientOptions,
    },
  );
  await client.connect(transport);
  return { client, pid: transport.pid!, stderr: () => err, close: () => client.close() };
}

/**
 * The pid a block wrote to `path` as a whole line (`echo $$ > file`). A shell creates the file
 * before it writes the number, so a file that exists may still be empty: that, or anything but a
 * pid and its newline, throws rather than reading as pid 0. Use `waitForPid` when the writer may
 * still be at it.
 */
export function readPid(path: string): number {
  const text = Deno.readTextFileSync(path);
  const pid = pidLine(text);
  if (pid === undefined) throw new Error(`${path} holds no whole pid line: ${JSON.stringify(text)}`);
  return pid;
}

function pidLine(text: string): number | undefined {
  const m = /^(\d+)\n/.exec(text);
  return m && Number(m[1]) > 0 ? Number(m[1]) : undefined;
}

/** Waits until `path` holds a whole pid line (a block announcing the process it started); that pid. */
export async function waitForPid(path: string, what: string, timeoutMs = 60_000): Promise<number> {
  let pid: number | undefined;
  await waitFor(
    () => {
      try {
        pid = pidLine(Deno.readTextFileSync(path));
      } catch {
        pid = undefined;
      }
      return pid !== undefined;
    },
    { what, timeoutMs },
  );
  return pid!;
}

/**
 * Starts `run_block` with `args` as a call the test can cancel; `pending` never rejects unobserved.
 */
export function cancellableRun(
  client: Client,
  args: Record<string, unknown>,
): { pending: Promise<unknown>; cancel: (reason: string) => void } {
  const ac = new AbortController();
  const pending = client.callTool({ name: "run_block", arguments: args }, {
    signal: ac.signal,
    timeout: 300_000,
  });
  pending.catch(() => undefined);
  return { pending, cancel: (reason) => ac.abort(reason) };
}

/** Waits until `path` exists as a regular file (a block announcing it has started). */
export async function waitForFile(path: string, what: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    () => {
      try {
        return Deno.statSync(path).isFile;
      } catch {
        return false;
      }
    },
    { what, timeoutMs },
  );
}

/** The text of the first content item of a tool result. */
export function resultText(r: unknown): string {
  const c = (r as { content?: { type: string; text?: string }[] }).content;
  if (!c || !c[0] || c[0].type !== "text") throw new Error(`not a text result: ${JSON.stringify(r)}`);
  return c[0].text ?? "";
}

/** The `block` enum of the `run_block` tool. */
export async function blockEnum(client: Client): Promise<string[]> {
  const { tools } = await client.listTools();
  const t = tools.find((x) => x.name === "run_block");
  if (!t) throw new Error(`no run_block tool in ${JSON.stringify(tools)}`);
  const props = t.inputSchema.properties as Record<string, { enum?: string[] }>;
  return props.block.enum ?? [];
}

/** An `agent-block mcp --http` server process and its URL. */
export interface HttpServerProc {
  url: string;
  proc: Deno.ChildProcess;
  stderr: () => string;
  stop: () => Promise<void>;
}

/** Starts `agent-block mcp --http 127.0.0.1:0 …` (`extraEnv` over the test's environment) and waits for its "listening on" line. */
export function startHttpServer(
  projectRoot: string,
  home: string,
  extraArgs: string[] = [],
  extraEnv: Record<string, string> = {},
): Promise<HttpServerProc> {
  return startListening(
    serverCommand(["-p", projectRoot, "--http", "127.0.0.1:0", ...extraArgs]),
    home,
    extraEnv,
  );
}

/**
 * Starts an agent-block server process (`argv`, from `serverCommand` or the like) with the test's
 * home (`extraEnv` over the test's environment) and waits for the "listening on URL" line it writes
 * to stderr.
 */
export async function startListening(
  argv: [string, ...string[]],
  home: string,
  extraEnv: Record<string, string> = {},
): Promise<HttpServerProc> {
  const [cmd, ...args] = argv;
  const proc = new Deno.Command(cmd, {
    args,
    env: { ...serverEnv(home), ...extraEnv },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let err = "";
  let out = "";
  let onLine: (() => void) | undefined;
  const pump = async (s: ReadableStream<Uint8Array>, into: (t: string) => void) => {
    const dec = new TextDecoder();
    for await (const c of s) {
      into(dec.decode(c, { stream: true }));
      onLine?.();
    }
  };
  const pumps = Promise.all([
    pump(proc.stderr, (t) => err += t),
    pump(proc.stdout, (t) => out += t),
  ]);
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]);
    };
    onLine = check;
    proc.status.then((s) => reject(new Error(`server exited (${s.code}) before listening:\n${err}`)));
    check();
  });
  return {
    url,
    proc,
    stderr: () => err + (out ? `\n[stdout]\n${out}` : ""),
    stop: async () => {
      try {
        proc.kill("SIGTERM");
      } catch { /* already gone */ }
      await proc.status;
      await pumps;
    },
  };
}

/** Sends one raw HTTP/1.1 request (any Host/Origin) and returns the status code and body. */
export async function rawHttp(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  const conn = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
  try {
    const lines = [`POST ${u.pathname} HTTP/1.1`];
    const all: Record<string, string> = {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "Content-Length": String(new TextEncoder().encode(body).length),
      Connection: "close",
      ...headers,
    };
    for (const [k, v] of Object.entries(all)) lines.push(`${k}: ${v}`);
    await conn.write(new TextEncoder().encode(lines.join("\r\n") + "\r\n\r\n" + body));
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(65536);
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
      const text = new TextDecoder().decode(concat(chunks));
      // A complete non-streaming response: stop once the declared length has arrived.
      const head = text.indexOf("\r\n\r\n");
      const len = /content-length:\s*(\d+)/i.exec(text.slice(0, head));
      if (head >= 0 && len && new TextEncoder().encode(text.slice(head + 4)).length >= Number(len[1])) break;
    }
    const text = new TextDecoder().decode(concat(chunks));
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
    return { status, body: text.slice(text.indexOf("\r\n\r\n") + 4) };
  } finally {
    conn.close();
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** A JSON-RPC `initialize` body (2025 era). */
export const INITIALIZE_BODY = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
});

// Assertions in the shape the tests use, over node:assert (no extra dependency in the lock).
/** Deep equality. */
export function assertEquals(actual: unknown, expected: unknown, msg?: string): void {
  nodeAssert.deepEqual(actual, expected, msg);
}
/** Truthiness. */
export function assert(cond: unknown, msg?: string): asserts cond {
  nodeAssert.ok(cond, msg);
}
/** A regular expression matches. */
export function assertMatch(actual: string, re: RegExp): void {
  nodeAssert.match(actual, re);
}
/** A substring is present. */
export function assertStringIncludes(actual: string, part: string): void {
  nodeAssert.ok(
    actual.includes(part),
    `expected ${JSON.stringify(actual)} to include ${JSON.stringify(part)}`,
  );
}
/** The promise rejects. */
export async function assertRejects(fn: () => Promise<unknown>): Promise<void> {
  await nodeAssert.rejects(fn);
}
