import {
  ProcessGroups,
  agentBlockHome
} from "./chunk-ZP6N6HXR.js";
import {
  loadDotenv
} from "./chunk-V4HDY3RR.js";
import {
  blockRoots,
  scanBlocks
} from "./chunk-QFKUF32L.js";
import {
  VERSION
} from "./chunk-HI6AAJID.js";
import {
  AgentBlockError,
  EXIT,
  Logger,
  UsageError,
  writeStderr
} from "./chunk-C44UDHAF.js";

// src/cli/mcp_command.ts
import { parseArgs } from "node:util";
import { join as join3, resolve } from "node:path";

// src/mcp_server/server.ts
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, Server } from "@modelcontextprotocol/server";

// src/mcp_server/child_run.ts
import { join as join2 } from "node:path";

// src/proc/self.ts
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
function isFile(path) {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}
function selfLaunch(execPath = Deno.execPath(), moduleUrl = import.meta.url) {
  const exe = basename(execPath).toLowerCase();
  const inCompiledVfs = moduleUrl.includes("/deno-compile-") || moduleUrl.includes("\\deno-compile-");
  if (inCompiledVfs || !(exe === "deno" || exe === "deno.exe") || !moduleUrl.startsWith("file:")) {
    return {
      mode: "compiled",
      prefix: [
        execPath
      ]
    };
  }
  const repo = join(dirname(fileURLToPath(moduleUrl)), "..", "..");
  const cli = join(repo, "cli.ts");
  const config = join(repo, "deno.json");
  const prefix = [
    execPath,
    "run",
    "-A",
    "--quiet"
  ];
  if (isFile(config)) prefix.push("--config", config);
  prefix.push(cli);
  return {
    mode: "source",
    prefix
  };
}
function selfCommand(args, launch = selfLaunch()) {
  return [
    ...launch.prefix,
    ...args
  ];
}

// src/proc/tree.ts
function processTable() {
  const out = [];
  let entries;
  try {
    entries = Deno.readDirSync("/proc");
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.push([
        Number(e.name),
        Number(rest[1]),
        Number(rest[2])
      ]);
    } catch {
    }
  }
  return out;
}
function descendantGroups(pid) {
  const table = processTable();
  const children = /* @__PURE__ */ new Map();
  for (const [p, pp] of table) {
    const list = children.get(pp);
    if (list) list.push(p);
    else children.set(pp, [
      p
    ]);
  }
  const pgidOf = new Map(table.map(([p, , g]) => [
    p,
    g
  ]));
  const groups = /* @__PURE__ */ new Set();
  const stack = [
    ...children.get(pid) ?? []
  ];
  const seen = /* @__PURE__ */ new Set();
  while (stack.length) {
    const p = stack.pop();
    if (seen.has(p)) continue;
    seen.add(p);
    const g = pgidOf.get(p);
    if (g !== void 0 && g !== pid && g > 1) groups.add(g);
    stack.push(...children.get(p) ?? []);
  }
  return [
    ...groups
  ];
}
async function endTree(p, graceMs) {
  p.endedBy ??= "terminated";
  p.signalGroup("SIGTERM");
  let timer;
  const graceOver = new Promise((r) => timer = setTimeout(() => r("timeout"), graceMs));
  const first = await Promise.race([
    p.status.then(() => "exited", () => "exited"),
    graceOver
  ]);
  clearTimeout(timer);
  if (first === "timeout") {
    const groups = descendantGroups(p.pid);
    p.signalGroup("SIGKILL");
    for (const g of groups) {
      try {
        Deno.kill(-g, "SIGKILL");
      } catch {
      }
    }
  }
  await p.status.catch(() => void 0);
  if (p.groupAlive()) p.signalGroup("SIGKILL");
}

// src/mcp_server/child_run.ts
var enc = new TextEncoder();
var STDERR_KEEP = 64 * 1024;
var LINE_MAX = 16 * 1024;
var DRAIN_MS = 2e3;
function forward(stream, prefix, sink, keep) {
  const reader = stream.getReader();
  const dec = new TextDecoder();
  let pending = "";
  const emit = (line) => sink(enc.encode(prefix + line + "\n"));
  const take = (text2) => {
    if (keep) {
      keep.text += text2;
      if (keep.text.length > STDERR_KEEP * 2) keep.text = keep.text.slice(-STDERR_KEEP);
    }
    pending += text2;
    let nl;
    while ((nl = pending.indexOf("\n")) >= 0) {
      emit(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
    }
    if (pending.length > LINE_MAX) {
      emit(pending);
      pending = "";
    }
  };
  const done = (async () => {
    try {
      while (true) {
        const { value, done: done2 } = await reader.read();
        if (done2) break;
        take(dec.decode(value, {
          stream: true
        }));
      }
    } catch {
    }
    take(dec.decode());
    if (pending.length) emit(pending);
  })();
  return {
    done,
    cancel: () => void reader.cancel().catch(() => void 0)
  };
}
function errorTextOf(stderr) {
  const lines = stderr.split(/\r?\n/);
  const start = lines.findLastIndex((l) => l.startsWith("error: "));
  if (start < 0) return void 0;
  const out = [
    lines[start].slice("error: ".length)
  ];
  for (let i = start + 1; i < lines.length; i++) {
    const l = lines[i];
    if (l.startsWith("stack traceback:") || l.startsWith("[") || l === "") break;
    out.push(l);
  }
  return out.join("\n");
}
function deferReasonOf(stderr) {
  const line = stderr.split(/\r?\n/).find((l) => l.startsWith("deferred: "));
  return line?.slice("deferred: ".length);
}
function tail(text2, lines = 20) {
  return text2.split(/\r?\n/).filter((l) => l.length).slice(-lines).join("\n");
}
async function runBlockInChild(opts) {
  if (opts.signal?.aborted) return {
    kind: "cancelled"
  };
  const dir = await Deno.makeTempDir({
    prefix: "ab_mcp_run_"
  });
  const resultPath = join2(dir, "result");
  const configPath = join2(dir, "run.json");
  const config = {};
  if (opts.prompt !== void 0) config.prompt = opts.prompt;
  if (opts.context !== void 0) config.context = opts.context;
  let proc;
  let timer;
  let onAbort;
  let onStop;
  try {
    await Deno.writeTextFile(configPath, JSON.stringify(config));
    const cmd = selfCommand([
      "-s",
      opts.block.path,
      "-p",
      opts.projectRoot,
      "--config",
      configPath,
      "--result",
      resultPath
    ], opts.launch ?? selfLaunch());
    try {
      proc = opts.procs.spawn({
        cmd,
        cwd: opts.projectRoot,
        env: opts.env,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        label: `run_block:${opts.block.name}`
      });
    } catch (e) {
      return {
        kind: "spawn_failed",
        message: `cannot start agent-block (${cmd[0]}): ${e.message}`
      };
    }
    const p = proc;
    opts.onStart?.(p.pid);
    let why;
    const end = (reason) => {
      if (why) return;
      why = reason;
      endTree(p, opts.graceMs ?? 2e3).catch(() => void 0);
    };
    timer = setTimeout(() => end("timeout"), opts.timeoutMs);
    onAbort = () => end("cancelled");
    onStop = () => end("stopped");
    opts.signal?.addEventListener("abort", onAbort, {
      once: true
    });
    opts.stopping?.addEventListener("abort", onStop, {
      once: true
    });
    if (opts.stopping?.aborted) end("stopped");
    const prefix = `[block ${opts.block.name}] `;
    const kept = {
      text: ""
    };
    const outputs = [
      forward(p.child.stdout, prefix, opts.stderr),
      forward(p.child.stderr, prefix, opts.stderr, kept)
    ];
    const status = await p.status;
    let drainTimer;
    const drained = await Promise.race([
      Promise.all(outputs.map((o) => o.done)).then(() => true),
      new Promise((r) => drainTimer = setTimeout(() => r(false), DRAIN_MS))
    ]);
    clearTimeout(drainTimer);
    if (!drained) {
      for (const o of outputs) o.cancel();
      await Promise.all(outputs.map((o) => o.done));
    }
    if (p.groupAlive()) await p.terminate();
    if (why === "timeout") return {
      kind: "timeout",
      seconds: opts.timeoutMs / 1e3
    };
    if (why === "cancelled") return {
      kind: "cancelled"
    };
    if (why === "stopped" || p.endedBy !== void 0) return {
      kind: "stopped"
    };
    switch (status.code) {
      case 0: {
        let text2 = "";
        try {
          text2 = new TextDecoder().decode(await Deno.readFile(resultPath));
        } catch (e) {
          if (!(e instanceof Deno.errors.NotFound)) throw e;
        }
        return {
          kind: "returned",
          text: text2
        };
      }
      case 75:
        return {
          kind: "deferred",
          reason: deferReasonOf(kept.text) ?? "(no reason given)"
        };
      case 1: {
        const message = errorTextOf(kept.text);
        if (message !== void 0) return {
          kind: "failed",
          message
        };
        return {
          kind: "exited",
          code: 1,
          stderrTail: tail(kept.text)
        };
      }
      default:
        return {
          kind: "exited",
          code: status.code,
          stderrTail: tail(kept.text)
        };
    }
  } finally {
    if (timer !== void 0) clearTimeout(timer);
    if (onAbort) opts.signal?.removeEventListener("abort", onAbort);
    if (onStop) opts.stopping?.removeEventListener("abort", onStop);
    await Deno.remove(dir, {
      recursive: true
    }).catch(() => void 0);
  }
}

// src/mcp_server/guide.md
var guide_default = "# Writing a block for agent-block's MCP server\n\n`run_block` hands one Lua script \u2014 a _block_ \u2014 to you as a tool. Each call starts a fresh agent-block process\nfor that block alone. The block talks to its own model with its own credentials, so none of its model turns,\ntool calls or intermediate text reach your context. You get back exactly one thing: the value the script\nreturned.\n\n## The contract: return a JSON string\n\nA block's result is what its main chunk returns, turned into text by the host. A Lua string arrives as it is.\nA table does not: it would arrive as `table: 0x\u2026`, which says nothing. So a block encodes its answer itself:\n\n```lua\n-- blocks/summarize.lua\n-- Summarize the text in the prompt. Returns { ok, text }.\nlocal agent = require(\"agent\")\nlocal r = agent.run({ prompt = _PROMPT, system = _CONTEXT })\nreturn std.json.encode({ ok = r.ok, text = r.content })\n```\n\n`agent.run` reports `{ ok, content, usage, num_turns, messages }` when it succeeds and\n`{ ok = false, error, usage, num_turns, messages }` when it does not; which fields a block passes on, and\nunder what names, is the block's own choice of wire shape.\n\nA block that returns nothing is not a failure: the tool result is then an empty text.\n\n## Inputs\n\n| global     | comes from                            |\n| ---------- | ------------------------------------- |\n| `_PROMPT`  | the `prompt` argument of `run_block`  |\n| `_CONTEXT` | the `context` argument of `run_block` |\n\nEach is `nil` when the caller leaves the argument out. A block that needs one should check for it and say so\nin its header comment.\n\n## The header comment is the documentation\n\nThe block's leading `--` comment (the lines at the very top of the file) is its description. It appears next\nto the block's name in the `run_block` tool description and in the `agent-block://blocks` resource. Say what\nthe block does, what it expects in `_PROMPT` and `_CONTEXT`, and the shape of the JSON it returns.\n\n## What is callable\n\nA block is `<name>.lua`, or a directory `<name>/` with an `init.lua`, placed directly inside a block root. The\nroots, nearest first (a nearer root wins when two hold the same name):\n\n1. `<project>/.agent-block/blocks/`\n2. `<project>/blocks/`\n3. `$AGENT_BLOCK_HOME/blocks/` (default `~/.agent-block/blocks/`)\n4. every `--block-dir` the server was started with\n\nThe `block` argument is an enum of exactly these names, so nothing outside the roots can be run through this\ntool. The roots are scanned again on every request: a new file is callable as soon as it exists, and a deleted\none disappears from the enum, without restarting the server.\n\n## Helpers live in `lib/`\n\nBlock roots hold entry points. Code that blocks share goes in a library directory and is loaded with\n`require(\"<name>\")`; the search order is the running block's own directory, `<project>/.agent-block/lib/`,\n`<project>/lib/`, `$AGENT_BLOCK_HOME/lib/`, then the modules built into agent-block\n(`require(\"embedded.<name>\")` always reaches a built-in one). A file in `lib/` is never callable as a block. A\nblock that needs private helpers can be a directory, `<name>/init.lua` with its helpers beside it: only\n`init.lua` is callable, and its own directory is searched first. Move a module from the project `lib/` to the\nuser `lib/` unchanged when a second project needs it.\n\n## Failing, declining, deferring\n\n- **Raise** (`error(...)`) when the block could not do its job. The call comes back as a failed tool result\n  (`isError`) whose text is the Lua error message.\n- **Return normally** when the block did its job and the answer is \"no\": put that in the JSON\n  (`{ ok = false, reason = \"\u2026\" }`). Only the block knows which of the two happened.\n- **`job.defer(reason)`** when something the block depends on is not available and it did not start. The\n  result says the block deferred, with the reason; nothing broke, and trying again later is reasonable.\n\nA run that takes longer than the server's per-run timeout is stopped (its whole process group) and reported as\na failed call. Cancelling the request stops the run the same way.\n\n## Output and logs\n\nThe block's process is separate from the server. Anything it prints \u2014 `print`, `io.write`, its logs \u2014 goes to\nthe server's standard error, which MCP clients show as server logs; it never becomes part of the result. Only\nthe return value is the result.\n\n## Environment\n\nThe block's process gets the server's environment without the host's credentials (`ANTHROPIC_API_KEY`,\n`OPENAI_API_KEY`, `AGENT_BLOCK_MESH_SECRET_KEY`), and loads `<project>/.env` itself, which is where its own\nkeys belong. It runs with the project root as its working directory.\n\n## Reading a run afterwards\n\nModel calls and tool calls a block makes through the runtime are recorded on its session log rather than\nprinted; read them back with `session:query` or `knl.views`. What reaches the server's stderr carries\n`trace_id` / `run_id` / `agent_id` / `agent_name` when those ids are set in the server's environment\n(`AGENT_BLOCK_RUN_ID`, \u2026).\n";

// src/mcp_server/server.ts
var GUIDE_TEXT = guide_default;
var GUIDE_URI = "agent-block://guide";
var BLOCKS_URI = "agent-block://blocks";
var BLOCK_URI_PREFIX = "agent-block://blocks/";
function currentBlocks(opts) {
  return scanBlocks(blockRoots(opts.projectRoot, opts.home, opts.blockDirs));
}
function runBlockTool(blocks) {
  const listing = blocks.length ? blocks.map((b) => `- ${b.name}: ${b.description || "(no description)"}`).join("\n") : "(no blocks are registered right now)";
  const blockProp = {
    type: "string",
    description: "Name of the registered block to run."
  };
  if (blocks.length) blockProp.enum = blocks.map((b) => b.name);
  return {
    name: "run_block",
    title: "Run an agent-block block",
    description: `Run one registered agent-block block (a Lua script) in a process of its own and return the one value it returns (by convention a JSON string). The block runs with its own model credentials; its LLM turns never enter this conversation. A Lua error is a failed call carrying the error text. Read agent-block://guide for the authoring contract.

Registered blocks:
${listing}`,
    inputSchema: {
      type: "object",
      properties: {
        block: blockProp,
        prompt: {
          type: "string",
          description: "Sets the block's _PROMPT."
        },
        context: {
          type: "string",
          description: "Sets the block's _CONTEXT."
        }
      },
      required: [
        "block"
      ],
      additionalProperties: false
    }
  };
}
function text(t, isError = false) {
  return isError ? {
    content: [
      {
        type: "text",
        text: t
      }
    ],
    isError: true
  } : {
    content: [
      {
        type: "text",
        text: t
      }
    ]
  };
}
function toolResultOf(name, r) {
  switch (r.kind) {
    case "returned":
      return text(r.text);
    case "failed":
      return text(r.message, true);
    case "deferred":
      return text(`block '${name}' deferred: ${r.reason} (exit 75: it did not start its work; nothing broke)`);
    case "timeout":
      return text(`block '${name}' ran past its timeout of ${r.seconds} s and was stopped`, true);
    case "cancelled":
      return text(`block '${name}' was cancelled`, true);
    case "stopped":
      return text(`block '${name}' was stopped: the server is shutting down`, true);
    case "exited":
      return text(`block '${name}' exited with code ${r.code}` + (r.stderrTail ? `:
${r.stderrTail}` : ""), true);
    case "spawn_failed":
      return text(r.message, true);
  }
}
function parseRunBlockArgs(args) {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return {
      error: "run_block: arguments must be an object with a 'block' field"
    };
  }
  const a = args;
  for (const k of Object.keys(a)) {
    if (![
      "block",
      "prompt",
      "context"
    ].includes(k)) {
      return {
        error: `run_block: unknown argument '${k}' (known: block, prompt, context)`
      };
    }
  }
  if (typeof a.block !== "string") {
    return {
      error: `run_block: argument 'block' must be a string, got ${a.block === void 0 ? "nothing" : typeof a.block}`
    };
  }
  for (const k of [
    "prompt",
    "context"
  ]) {
    if (a[k] !== void 0 && a[k] !== null && typeof a[k] !== "string") {
      return {
        error: `run_block: argument '${k}' must be a string, got ${typeof a[k]}`
      };
    }
  }
  return {
    block: a.block,
    prompt: typeof a.prompt === "string" ? a.prompt : void 0,
    context: typeof a.context === "string" ? a.context : void 0
  };
}
function registryJson(blocks) {
  return JSON.stringify(blocks.map((b) => ({
    name: b.name,
    tier: b.tier,
    path: b.path,
    description: b.description
  })), null, 2);
}
async function readResource(opts, uri) {
  if (uri === GUIDE_URI) {
    return {
      contents: [
        {
          uri,
          mimeType: "text/markdown",
          text: GUIDE_TEXT
        }
      ]
    };
  }
  const blocks = currentBlocks(opts);
  if (uri === BLOCKS_URI) {
    return {
      contents: [
        {
          uri,
          mimeType: "application/json",
          text: registryJson(blocks)
        }
      ]
    };
  }
  if (uri.startsWith(BLOCK_URI_PREFIX)) {
    const name = decodeURIComponent(uri.slice(BLOCK_URI_PREFIX.length));
    const b = blocks.find((x) => x.name === name);
    if (b) {
      try {
        return {
          contents: [
            {
              uri,
              mimeType: "text/x-lua",
              text: await Deno.readTextFile(b.path)
            }
          ]
        };
      } catch (e) {
        throw new ResourceNotFoundError(uri, `block '${name}' could not be read: ${e.message}`);
      }
    }
    throw new ResourceNotFoundError(uri, `no block '${name}'; registered: ${blocks.map((x) => x.name).join(", ") || "(none)"}`);
  }
  throw new ResourceNotFoundError(uri, `unknown resource ${uri}`);
}
var callSeq = 0;
async function callRunBlock(opts, args, signal, onProgress) {
  const parsed = parseRunBlockArgs(args);
  if ("error" in parsed) return text(parsed.error, true);
  const blocks = currentBlocks(opts);
  const block = blocks.find((b) => b.name === parsed.block);
  if (!block) {
    return text(`run_block: unknown block '${parsed.block}'; registered: ${blocks.map((b) => b.name).join(", ") || "(none)"}`, true);
  }
  const n = ++callSeq;
  const started = performance.now();
  const running = runBlockInChild({
    block,
    projectRoot: opts.projectRoot,
    prompt: parsed.prompt,
    context: parsed.context,
    timeoutMs: opts.runTimeoutSecs * 1e3,
    signal,
    stopping: opts.stopping,
    procs: opts.procs,
    stderr: opts.stderr,
    launch: opts.launch,
    env: opts.childEnv,
    onStart: (pid) => opts.log.debug(`run_block #${n} '${block.name}' started (pid ${pid})`)
  });
  let ticker;
  if (onProgress && (opts.progressIntervalMs ?? 0) > 0) {
    ticker = setInterval(() => {
      const secs = Math.round((performance.now() - started) / 1e3);
      onProgress(secs, `block '${block.name}' has been running for ${secs} s`);
    }, opts.progressIntervalMs);
  }
  let r;
  try {
    r = await running;
  } finally {
    clearInterval(ticker);
  }
  opts.log.info(`run_block #${n} '${block.name}': ${r.kind} in ${Math.round(performance.now() - started)} ms`);
  return toolResultOf(block.name, r);
}
function createBlockServer(opts) {
  const server = new Server({
    name: "agent-block",
    version: VERSION
  }, {
    // listChanged: the registry watcher (watch.ts) says when blocks come and go.
    capabilities: {
      tools: {
        listChanged: true
      },
      resources: {
        listChanged: true
      }
    },
    instructions: "Runs agent-block blocks (Lua scripts) as the run_block tool. Read agent-block://guide for how to write one and agent-block://blocks for what is registered."
  });
  server.setRequestHandler("tools/list", () => ({
    tools: [
      runBlockTool(currentBlocks(opts))
    ]
  }));
  server.setRequestHandler("tools/call", async (req, ctx) => {
    if (req.params.name !== "run_block") {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${req.params.name} (this server has one tool: run_block)`);
    }
    const token = req.params._meta?.progressToken ?? ctx.mcpReq._meta?.progressToken;
    const progress = token === void 0 ? void 0 : (seconds, message) => {
      ctx.mcpReq.notify({
        method: "notifications/progress",
        params: {
          progressToken: token,
          progress: seconds,
          message
        }
      }).catch(() => void 0);
    };
    const handling = callRunBlock(opts, req.params.arguments ?? {}, ctx.mcpReq.signal, progress);
    opts.runs?.add(handling);
    try {
      return await handling;
    } finally {
      opts.runs?.delete(handling);
    }
  });
  server.setRequestHandler("resources/list", () => ({
    resources: [
      {
        uri: GUIDE_URI,
        name: "guide",
        title: "How to write an agent-block block",
        mimeType: "text/markdown"
      },
      {
        uri: BLOCKS_URI,
        name: "blocks",
        title: "Registered blocks",
        description: "The block registry as JSON: name, tier, path, description.",
        mimeType: "application/json"
      },
      ...currentBlocks(opts).map((b) => ({
        uri: BLOCK_URI_PREFIX + encodeURIComponent(b.name),
        name: `block ${b.name}`,
        description: b.description || void 0,
        mimeType: "text/x-lua"
      }))
    ]
  }));
  server.setRequestHandler("resources/templates/list", () => ({
    resourceTemplates: [
      {
        uriTemplate: `${BLOCK_URI_PREFIX}{name}`,
        name: "block source",
        description: "The Lua source of one registered block.",
        mimeType: "text/x-lua"
      }
    ]
  }));
  server.setRequestHandler("resources/read", (req) => readResource(opts, req.params.uri));
  return server;
}

// src/mcp_server/stdio.ts
import process from "node:process";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
function serveStdioUntilClosed(factory, opts) {
  return new Promise((resolve2) => {
    const handle = serveStdio(factory, {
      onerror: (e) => opts.log.warn(`stdio: ${e.message}`)
    });
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      process.stdin.off("end", finish);
      process.stdin.off("close", finish);
      opts.stop?.removeEventListener("abort", stopped);
      handle.close().catch(() => void 0).finally(() => resolve2());
    };
    const stopped = () => {
      (opts.drain?.() ?? Promise.resolve()).then(() => new Promise((r) => setTimeout(r, 0))).finally(finish);
    };
    process.stdin.on("end", finish);
    process.stdin.on("close", finish);
    if (opts.stop?.aborted) stopped();
    else opts.stop?.addEventListener("abort", stopped, {
      once: true
    });
  });
}

// src/mcp_server/http.ts
import { createMcpHandler, hostHeaderValidationResponse, isLegacyRequest, localhostAllowedHostnames, originValidationResponse, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
var MAX_LEGACY_SESSIONS = 64;
function isLoopback(host) {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return m !== null && m.slice(1).every((x) => Number(x) <= 255);
}
function parseListenAddress(raw) {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(raw.trim());
  if (!m) throw new UsageError(`--http must be HOST:PORT (e.g. 127.0.0.1:8765), got '${raw}'`);
  const port = Number(m[2]);
  if (port > 65535) throw new UsageError(`--http: port must be 0..65535, got ${m[2]}`);
  const host = m[1].replace(/^\[|\]$/g, "");
  if (!isLoopback(host)) {
    throw new UsageError(`--http: refusing to listen on '${host}': only loopback addresses (127.0.0.1, ::1, localhost) are served`);
  }
  return {
    hostname: host,
    port
  };
}
function allowedHostnames(hostname) {
  const bound = hostname.includes(":") ? `[${hostname}]` : hostname;
  const all = /* @__PURE__ */ new Set([
    ...localhostAllowedHostnames(),
    bound.toLowerCase()
  ]);
  return [
    ...all
  ];
}
function readTokenFile(path) {
  let raw;
  try {
    raw = Deno.readTextFileSync(path);
  } catch (e) {
    throw new AgentBlockError(`--token-file: cannot read ${path}: ${e.message}`);
  }
  const token = raw.trim();
  if (!token) throw new AgentBlockError(`--token-file: ${path} is empty`);
  if (/\s/.test(token)) throw new AgentBlockError(`--token-file: ${path} must hold one token without spaces`);
  return token;
}
function timingSafeEqual(a, b) {
  const ea = new TextEncoder().encode(a);
  const eb = new TextEncoder().encode(b);
  let diff = ea.length ^ eb.length;
  for (let i = 0; i < Math.max(ea.length, eb.length); i++) diff |= (ea[i] ?? 0) ^ (eb[i] ?? 0);
  return diff === 0;
}
function jsonError(status, message, headers = {}) {
  return Response.json({
    jsonrpc: "2.0",
    error: {
      code: -32e3,
      message
    },
    id: null
  }, {
    status,
    headers
  });
}
function refusal(req, allowed, token) {
  const bad = hostHeaderValidationResponse(req, allowed) ?? originValidationResponse(req, allowed);
  if (bad) return bad;
  if (token !== void 0) {
    const auth = req.headers.get("authorization") ?? "";
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    if (!m || !timingSafeEqual(m[1], token)) {
      return jsonError(401, "Unauthorized: a valid bearer token is required", {
        "WWW-Authenticate": 'Bearer realm="agent-block"'
      });
    }
  }
  return void 0;
}
function serveHttp(factory, addr, opts) {
  const allowed = allowedHostnames(addr.hostname);
  const modern = createMcpHandler(factory, {
    legacy: "reject",
    onerror: (e) => opts.log.warn(e.message)
  });
  const sessions = /* @__PURE__ */ new Map();
  opts.watcher?.alsoNotify(() => {
    modern.notify.toolsChanged();
    modern.notify.resourcesChanged();
  });
  async function legacy(req) {
    const sid = req.headers.get("mcp-session-id");
    if (sid) {
      const s = sessions.get(sid);
      if (!s) return jsonError(404, `Session not found: ${sid}`);
      return await s.transport.handleRequest(req);
    }
    if (req.method !== "POST") return jsonError(400, "Bad Request: no session (send initialize first)");
    if (sessions.size >= MAX_LEGACY_SESSIONS) {
      opts.log.warn(`http: refused a new 2025-era session: ${sessions.size} are open`);
      return jsonError(503, `Too many open sessions (${MAX_LEGACY_SESSIONS}); close one (DELETE) first`);
    }
    const server2 = factory();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, {
          transport,
          server: server2
        });
        opts.watcher?.track(server2);
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      }
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server2.connect(transport);
    const res = await transport.handleRequest(req);
    if (!transport.sessionId) await server2.close().catch(() => void 0);
    return res;
  }
  let httpServer;
  try {
    httpServer = Deno.serve({
      hostname: addr.hostname,
      port: addr.port,
      // Deno's default announcement goes to stdout, which is not ours to use.
      onListen: () => {
      },
      onError: (e) => {
        opts.log.error(`http: ${e?.message ?? e}`);
        return jsonError(500, "Internal error");
      }
    }, async (req) => {
      const refused = refusal(req, allowed, opts.token);
      if (refused) {
        opts.log.warn(`http: refused ${req.method} (Host ${req.headers.get("host")}, Origin ${req.headers.get("origin") ?? "-"}): ${refused.status}`);
        return refused;
      }
      if (new URL(req.url).pathname !== "/mcp") return jsonError(404, "Not found: the endpoint is /mcp");
      if (await isLegacyRequest(req)) return await legacy(req);
      return await modern.fetch(req);
    });
  } catch (e) {
    throw new AgentBlockError(`--http: cannot listen on ${addr.hostname}:${addr.port}: ${e.message}`);
  }
  const a = httpServer.addr;
  const host = a.hostname.includes(":") ? `[${a.hostname}]` : a.hostname;
  const server = httpServer;
  return {
    url: `http://${host}:${a.port}/mcp`,
    finished: server.finished,
    shutdown: async () => {
      for (const s of [
        ...sessions.values()
      ]) await s.server.close().catch(() => void 0);
      sessions.clear();
      await modern.close().catch(() => void 0);
      await server.shutdown();
    }
  };
}

// src/mcp_server/watch.ts
function registrySignature(blocks) {
  return JSON.stringify(blocks.map((b) => [
    b.name,
    b.tier,
    b.path,
    b.description
  ]));
}
var RegistryWatcher = class {
  scan;
  log;
  #servers;
  #extra;
  #last;
  #timer;
  constructor(scan, log) {
    this.scan = scan;
    this.log = log;
    this.#servers = /* @__PURE__ */ new Set();
    this.#extra = [];
    this.#last = registrySignature(scan());
  }
  /** Notifies `server` of later changes (returns it, for use inside a factory). */
  track(server) {
    this.#servers.add(server);
    return server;
  }
  /** Calls `fn` on every change as well (e.g. an HTTP handler's `notify.toolsChanged`). */
  alsoNotify(fn) {
    this.#extra.push(fn);
  }
  /** Number of tracked instances. */
  get tracked() {
    return this.#servers.size;
  }
  /** Re-scans now; notifies and returns true when the registry changed. */
  check() {
    let sig;
    try {
      sig = registrySignature(this.scan());
    } catch (e) {
      this.log.warn(`registry scan failed: ${e.message}`);
      return false;
    }
    if (sig === this.#last) return false;
    this.#last = sig;
    this.log.debug("the block registry changed: notifying clients");
    for (const server of [
      ...this.#servers
    ]) {
      const drop = () => this.#servers.delete(server);
      try {
        server.sendToolListChanged().catch(drop);
        server.sendResourceListChanged().catch(drop);
      } catch {
        drop();
      }
    }
    for (const fn of this.#extra) {
      try {
        fn();
      } catch (e) {
        this.log.warn(`list_changed notification failed: ${e.message}`);
      }
    }
    return true;
  }
  /** Starts polling every `intervalMs`. */
  start(intervalMs = 1e3) {
    this.stop();
    this.#timer = setInterval(() => this.check(), intervalMs);
  }
  stop() {
    if (this.#timer !== void 0) clearInterval(this.#timer);
    this.#timer = void 0;
  }
};

// src/cli/mcp_command.ts
var MCP_HELP = `agent-block ${VERSION} mcp \u2014 serve the registered blocks over MCP

Usage:
  agent-block mcp [-p DIR] [--block-dir DIR]... [--http 127.0.0.1:PORT [--token-file F]]
                  [--run-timeout SECS] [--progress-secs SECS]

Serves one tool, run_block {block, prompt?, context?}, where block is one of the blocks in
<project>/.agent-block/blocks/, <project>/blocks/, $AGENT_BLOCK_HOME/blocks/ and every
--block-dir (nearer first; re-scanned on every request). Each call runs the block in an
agent-block process of its own. Resources: agent-block://guide, agent-block://blocks,
agent-block://blocks/<name>.

Options:
  -p, --project DIR        project root (default .)
      --block-dir DIR      another directory of blocks (repeatable)
      --http HOST:PORT     serve Streamable HTTP on a loopback address instead of stdio
                           (PORT 0 picks a free port; the URL is printed on stderr)
      --token-file FILE    with --http: require "Authorization: Bearer <token in FILE>"
      --run-timeout SECS   stop a run after SECS seconds (default 600)
      --progress-secs SECS while a run goes on, send a progress notification every SECS
                           seconds to calls that asked for progress (default 10; 0: never)
  -h, --help               print this help

stdout carries the protocol only; logs and anything a block prints go to stderr.
`;
function parseMcpArgs(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        project: {
          type: "string",
          short: "p"
        },
        "block-dir": {
          type: "string",
          multiple: true
        },
        http: {
          type: "string"
        },
        "token-file": {
          type: "string"
        },
        "run-timeout": {
          type: "string"
        },
        "progress-secs": {
          type: "string"
        },
        help: {
          type: "boolean",
          short: "h"
        }
      }
    });
  } catch (e) {
    throw new UsageError(`mcp: ${e.message}`);
  }
  const v = parsed.values;
  if (v.help) return "help";
  if (v["token-file"] !== void 0 && v.http === void 0) {
    throw new UsageError("mcp: --token-file needs --http (a stdio server has no one to authenticate)");
  }
  let runTimeoutSecs = 600;
  if (v["run-timeout"] !== void 0) {
    const n = Number(v["run-timeout"]);
    if (!Number.isFinite(n) || n <= 0) {
      throw new UsageError(`mcp: --run-timeout must be a positive number of seconds, got '${v["run-timeout"]}'`);
    }
    runTimeoutSecs = n;
  }
  let progressSecs = 10;
  if (v["progress-secs"] !== void 0) {
    const n = Number(v["progress-secs"]);
    if (!Number.isFinite(n) || n < 0) {
      throw new UsageError(`mcp: --progress-secs must be a number of seconds (0 turns it off), got '${v["progress-secs"]}'`);
    }
    progressSecs = n;
  }
  return {
    project: v.project ?? ".",
    blockDirs: v["block-dir"] ?? [],
    http: v.http,
    tokenFile: v["token-file"],
    runTimeoutSecs,
    progressSecs
  };
}
async function mcpCommand(argv) {
  const s = parseMcpArgs(argv);
  if (s === "help") {
    Deno.stdout.writeSync(new TextEncoder().encode(MCP_HELP));
    return EXIT.OK;
  }
  const addr = s.http !== void 0 ? parseListenAddress(s.http) : void 0;
  const token = s.tokenFile !== void 0 ? readTokenFile(s.tokenFile) : void 0;
  let projectRoot;
  try {
    projectRoot = Deno.realPathSync(s.project);
    if (!Deno.statSync(projectRoot).isDirectory) throw new Error("not a directory");
  } catch {
    throw new AgentBlockError(`mcp: project directory ${s.project} does not exist`);
  }
  const blockDirs = s.blockDirs.map((d) => resolve(d));
  for (const d of blockDirs) {
    try {
      if (!Deno.statSync(d).isDirectory) throw new Error();
    } catch {
      throw new AgentBlockError(`mcp: --block-dir ${d} is not a directory`);
    }
  }
  const log = Logger.fromEnv("agent-block mcp");
  for (const w of loadDotenv(join3(projectRoot, ".env"), join3(projectRoot, ".env"))) log.warn(w);
  const procs = new ProcessGroups();
  const stop = new AbortController();
  const runs = /* @__PURE__ */ new Set();
  const opts = {
    projectRoot,
    home: agentBlockHome(),
    blockDirs,
    runTimeoutSecs: s.runTimeoutSecs,
    progressIntervalMs: s.progressSecs * 1e3,
    procs,
    log,
    stderr: writeStderr,
    stopping: stop.signal,
    runs
  };
  const watcher = new RegistryWatcher(() => currentBlocks(opts), log);
  watcher.start(1e3);
  const factory = () => createBlockServer(opts);
  const listeners = [
    "SIGINT",
    "SIGTERM"
  ].map((sig) => [
    sig,
    () => stop.abort(`received ${sig}`)
  ]);
  for (const [sig, fn] of listeners) Deno.addSignalListener(sig, fn);
  try {
    const names = currentBlocks(opts).map((b) => b.name);
    if (addr) {
      const serving = serveHttp(factory, addr, {
        token,
        log,
        watcher
      });
      writeStderr(new TextEncoder().encode(`agent-block mcp: listening on ${serving.url}
`));
      log.info(`serving ${names.length} block(s) from ${projectRoot}${token ? " (bearer token required)" : ""}`);
      stop.signal.addEventListener("abort", () => void Promise.allSettled([
        ...runs
      ]).then(() => new Promise((r) => setTimeout(r, 0))).then(() => serving.shutdown()), {
        once: true
      });
      await serving.finished;
    } else {
      log.info(`serving ${names.length} block(s) from ${projectRoot} over stdio`);
      await serveStdioUntilClosed(() => watcher.track(factory()), {
        log,
        stop: stop.signal,
        drain: () => Promise.allSettled([
          ...runs
        ])
      });
    }
  } finally {
    watcher.stop();
    for (const [sig, fn] of listeners) Deno.removeSignalListener(sig, fn);
    stop.abort("the server is stopping");
    await Promise.allSettled([
      ...runs
    ]);
    await procs.endAll();
  }
  return EXIT.OK;
}
export {
  MCP_HELP,
  mcpCommand,
  parseMcpArgs
};
