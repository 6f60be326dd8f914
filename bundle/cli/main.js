import {
  parseFlags,
  runBlock
} from "./chunk-2ZYXKZXU.js";
import {
  preloadLua
} from "./chunk-AWGGZNFJ.js";
import "./chunk-GAVNBGPF.js";
import "./chunk-PENIMNON.js";
import "./chunk-J4FUTWHQ.js";
import {
  agentBlockHome
} from "./chunk-ZP6N6HXR.js";
import {
  loadDotenv
} from "./chunk-V4HDY3RR.js";
import "./chunk-VKEBFTIZ.js";
import {
  blockRoots,
  findBlock,
  scanBlocks
} from "./chunk-QFKUF32L.js";
import {
  VERSION
} from "./chunk-HI6AAJID.js";
import {
  AgentBlockError,
  EXIT,
  UsageError,
  writeStderr
} from "./chunk-C44UDHAF.js";

// src/cli/run_command.ts
import { dirname, join, resolve } from "node:path";

// src/config/run_config.ts
var KNOWN = /* @__PURE__ */ new Set([
  "prompt",
  "context",
  "result",
  "labels",
  "cpu_limit_secs",
  "memory_limit_mb",
  "mcp_timeout_secs"
]);
function typeName(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}
function validateRunConfig(data, file) {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new AgentBlockError(`${file}: must be a JSON object, got ${typeName(data)}`);
  }
  const obj = data;
  for (const k of Object.keys(obj)) {
    if (!KNOWN.has(k)) {
      throw new AgentBlockError(`${file}: unknown field '${k}' (known: ${[
        ...KNOWN
      ].join(", ")})`);
    }
  }
  const out = {};
  for (const k of [
    "prompt",
    "context",
    "result"
  ]) {
    if (obj[k] === void 0) continue;
    if (typeof obj[k] !== "string") {
      throw new AgentBlockError(`${file}: field '${k}' must be a string, got ${typeName(obj[k])}`);
    }
    out[k] = obj[k];
  }
  if (obj.labels !== void 0) {
    const l = obj.labels;
    if (typeof l !== "object" || l === null || Array.isArray(l)) {
      throw new AgentBlockError(`${file}: field 'labels' must be an object, got ${typeName(l)}`);
    }
    out.labels = {};
    for (const [k, v] of Object.entries(l)) {
      if (typeof v !== "string") {
        throw new AgentBlockError(`${file}: field 'labels.${k}' must be a string, got ${typeName(v)}`);
      }
      out.labels[k] = v;
    }
  }
  for (const k of [
    "cpu_limit_secs",
    "memory_limit_mb",
    "mcp_timeout_secs"
  ]) {
    const v = obj[k];
    if (v === void 0) continue;
    if (typeof v !== "number" || !(v > 0) || k === "mcp_timeout_secs" && !Number.isInteger(v)) {
      throw new AgentBlockError(`${file}: field '${k}' must be a positive ${k === "mcp_timeout_secs" ? "integer" : "number"}, got ${typeof v === "number" ? v : typeName(v)}`);
    }
    out[k] = v;
  }
  return out;
}
function readRunConfig(path) {
  let text;
  try {
    text = Deno.readTextFileSync(path);
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound ? "no such file" : e.message;
    throw new AgentBlockError(`cannot read config ${path}: ${why}`);
  }
  let data;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new AgentBlockError(`${path}: not valid JSON: ${e.message}`);
  }
  return validateRunConfig(data, path);
}

// src/cli/run_command.ts
var RUN_HELP = `agent-block ${VERSION} \u2014 run one Lua block, then exit

Usage:
  agent-block (-s FILE | -b NAME) [options]
  agent-block <command> [options]     (test, mcp, vendor, knl; see <command> --help)

Options:
  -s, --script FILE        Lua script to run
  -b, --block NAME         registered block to run (see "Blocks and libraries" in the README)
  -p, --project DIR        project root: .env, lib/ and blocks/ tiers, databases (default .)
      --prompt TEXT        sets _PROMPT
  -c, --context TEXT       sets _CONTEXT
      --config FILE        JSON file: prompt, context, result, labels, limits (lowest layer)
      --result FILE        write the value the script returns here (only if it returns)
      --label K=V          label the run (repeatable)
      --cpu-limit SECS     bound the Lua CPU time        (env AGENT_BLOCK_CPU_LIMIT_SECS)
      --memory-limit MB    bound the Lua heap            (env AGENT_BLOCK_MEMORY_LIMIT_MB)
      --mcp-timeout-secs N timeout of every MCP request  (env AGENT_BLOCK_MCP_TIMEOUT_SECS, default 30)
  -V, --version            print the version
  -h, --help               print this help

Exit codes: 0 ran and returned; 75 job.defer(); 1 raised or never ran; 2 bad command line;
130 interrupted (SIGINT/SIGTERM).
`;
function positiveNumber(flag, raw, integer = false) {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || integer && !Number.isInteger(n)) {
    throw new UsageError(`${flag} must be a positive ${integer ? "integer" : "number"}, got '${raw}'`);
  }
  return n;
}
function envNumber(name, integer = false) {
  const raw = Deno.env.get(name);
  if (raw === void 0 || raw === "") return void 0;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || integer && !Number.isInteger(n)) {
    throw new AgentBlockError(`${name} must be a positive ${integer ? "integer" : "number"}, got '${raw}'`);
  }
  return n;
}
function parseRunArgs(argv) {
  const parsed = parseFlags(argv, {
    script: {
      type: "string",
      short: "s"
    },
    block: {
      type: "string",
      short: "b"
    },
    project: {
      type: "string",
      short: "p"
    },
    prompt: {
      type: "string"
    },
    context: {
      type: "string",
      short: "c"
    },
    config: {
      type: "string"
    },
    result: {
      type: "string"
    },
    label: {
      type: "string",
      multiple: true
    },
    "cpu-limit": {
      type: "string"
    },
    "memory-limit": {
      type: "string"
    },
    "mcp-timeout-secs": {
      type: "string"
    },
    version: {
      type: "boolean",
      short: "V"
    },
    help: {
      type: "boolean",
      short: "h"
    }
  });
  const v = parsed.values;
  if (v.help) return "help";
  if (v.version) return "version";
  const flagLabels = {};
  for (const l of v.label ?? []) {
    const eq = l.indexOf("=");
    if (eq <= 0) throw new UsageError(`--label must be KEY=VALUE, got '${l}'`);
    flagLabels[l.slice(0, eq)] = l.slice(eq + 1);
  }
  const cpu = v["cpu-limit"] !== void 0 ? positiveNumber("--cpu-limit", v["cpu-limit"]) : void 0;
  const mem = v["memory-limit"] !== void 0 ? positiveNumber("--memory-limit", v["memory-limit"]) : void 0;
  const mcpT = v["mcp-timeout-secs"] !== void 0 ? positiveNumber("--mcp-timeout-secs", v["mcp-timeout-secs"], true) : void 0;
  if (v.script !== void 0 && v.block !== void 0) {
    throw new AgentBlockError("--script and --block contradict each other: name one script to run");
  }
  if (v.script === void 0 && v.block === void 0) {
    throw new UsageError("nothing to run: pass --script FILE or --block NAME (see --help)");
  }
  const project = v.project ?? ".";
  for (const w of loadDotenv(join(project, ".env"), join(project, ".env"))) {
    writeStderr(new TextEncoder().encode(`[warn] agent-block: ${w}
`));
  }
  const cfg = v.config !== void 0 ? readRunConfig(v.config) : {};
  return {
    script: v.script,
    block: v.block,
    project,
    prompt: v.prompt ?? cfg.prompt,
    context: v.context ?? cfg.context,
    result: v.result ?? cfg.result,
    labels: {
      ...cfg.labels ?? {},
      ...flagLabels
    },
    cpuLimitSecs: cpu ?? envNumber("AGENT_BLOCK_CPU_LIMIT_SECS") ?? cfg.cpu_limit_secs,
    memoryLimitMb: mem ?? envNumber("AGENT_BLOCK_MEMORY_LIMIT_MB") ?? cfg.memory_limit_mb,
    mcpTimeoutSecs: mcpT ?? envNumber("AGENT_BLOCK_MCP_TIMEOUT_SECS", true) ?? cfg.mcp_timeout_secs ?? 30
  };
}
function writeAtomic(path, data) {
  const abs = resolve(path);
  const tmp = join(dirname(abs), `.${crypto.randomUUID()}.tmp`);
  try {
    Deno.writeFileSync(tmp, data);
    Deno.renameSync(tmp, abs);
  } catch (e) {
    try {
      Deno.removeSync(tmp);
    } catch {
    }
    throw new AgentBlockError(`cannot write result file ${path}: ${e.message}`);
  }
}
var enc = new TextEncoder();
function say(line) {
  writeStderr(enc.encode(line.endsWith("\n") ? line : line + "\n"));
}
function reportOutcome(outcome, resultPath) {
  switch (outcome.status) {
    case "returned": {
      if (resultPath !== void 0) {
        const r = outcome.result;
        writeAtomic(resultPath, r === void 0 ? new Uint8Array() : typeof r === "string" ? enc.encode(r) : r);
      }
      return EXIT.OK;
    }
    case "deferred":
      say(`deferred: ${outcome.reason}`);
      return EXIT.DEFERRED;
    case "exited":
      return outcome.code;
    case "stopped":
      say(`stopped: ${outcome.reason}`);
      return EXIT.INTERRUPTED;
    case "failed":
      say(`error: ${outcome.message}`);
      if (outcome.traceback) say(outcome.traceback);
      return EXIT.FAILED;
  }
}
async function runCommand(argv) {
  preloadLua();
  const s = parseRunArgs(argv);
  if (s === "help") {
    Deno.stdout.writeSync(enc.encode(RUN_HELP));
    return EXIT.OK;
  }
  if (s === "version") {
    Deno.stdout.writeSync(enc.encode(`agent-block ${VERSION}
`));
    return EXIT.OK;
  }
  let scriptPath = s.script;
  if (s.block !== void 0) {
    const roots = blockRoots(resolve(s.project), agentBlockHome());
    const b = findBlock(roots, s.block);
    if (!b) {
      const known = scanBlocks(roots).map((x) => x.name);
      throw new AgentBlockError(`unknown block '${s.block}'; known blocks: ${known.length ? known.join(", ") : "(none)"} (searched ${roots.map((r) => r.dir).join(", ")})`);
    }
    scriptPath = b.path;
  }
  const stop = new AbortController();
  const onSignal = (sig) => () => stop.abort(`received ${sig}`);
  const listeners = [
    [
      "SIGINT",
      onSignal("SIGINT")
    ],
    [
      "SIGTERM",
      onSignal("SIGTERM")
    ]
  ];
  for (const [sig, fn] of listeners) Deno.addSignalListener(sig, fn);
  try {
    const outcome = await runBlock({
      script: {
        path: scriptPath
      },
      projectRoot: s.project,
      prompt: s.prompt,
      context: s.context,
      labels: s.labels,
      limits: {
        cpuSeconds: s.cpuLimitSecs,
        memoryBytes: s.memoryLimitMb ? Math.round(s.memoryLimitMb * 1024 * 1024) : void 0
      },
      signal: stop.signal,
      mcpTimeoutSecs: s.mcpTimeoutSecs
    });
    return reportOutcome(outcome, s.result);
  } finally {
    for (const [sig, fn] of listeners) Deno.removeSignalListener(sig, fn);
  }
}

// src/cli/main.ts
var SUBCOMMANDS = {
  test: {
    load: async () => (await import("./test_command-X55ZBDA3.js")).testCommand
  },
  knl: {
    load: async () => (await import("./knl_command-CHXRF5U4.js")).knlCommand
  },
  mcp: {
    load: async () => (await import("./mcp_command-ORPRM7SQ.js")).mcpCommand
  },
  vendor: {
    load: async () => (await import("./vendor_command-RIG6DCC2.js")).vendorCommand
  }
};
async function main(argv) {
  const enc2 = new TextEncoder();
  try {
    const entry = argv.length > 0 ? SUBCOMMANDS[argv[0]] : void 0;
    if (!entry) return await runCommand(argv);
    const sub = typeof entry === "function" ? entry : await entry.load();
    return await sub(argv.slice(1));
  } catch (e) {
    if (e instanceof UsageError) {
      writeStderr(enc2.encode(`error: ${e.message}
(run agent-block --help for usage)
`));
      return EXIT.USAGE;
    }
    if (e instanceof AgentBlockError) {
      writeStderr(enc2.encode(`error: ${e.message}
`));
      return e.exitCode;
    }
    writeStderr(enc2.encode(`error: internal failure: ${e?.stack ?? e}
`));
    return EXIT.FAILED;
  }
}
export {
  SUBCOMMANDS,
  main
};
