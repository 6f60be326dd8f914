import {
  parseFlags,
  runBlock
} from "./chunk-2ZYXKZXU.js";
import "./chunk-AWGGZNFJ.js";
import "./chunk-GAVNBGPF.js";
import "./chunk-PENIMNON.js";
import "./chunk-J4FUTWHQ.js";
import "./chunk-ZP6N6HXR.js";
import {
  displayPath
} from "./chunk-VKEBFTIZ.js";
import "./chunk-QFKUF32L.js";
import "./chunk-HI6AAJID.js";
import {
  AgentBlockError,
  EXIT
} from "./chunk-C44UDHAF.js";

// src/cli/test_command.ts
import { basename, dirname, join, resolve } from "node:path";
var DRIVER = `local lspec = require("lspec")
lspec.expose()
local fn, err = loadfile(SPEC_PATH)
if not fn then lspec.file_error(err) else
  local ok, e = xpcall(fn, debug.traceback)
  if not ok then lspec.file_error(e) end
end
return std.json.encode(lspec.results())
`;
async function runSpecFile(path, projectRoot = ".") {
  const abs = resolve(path);
  const chunks = [];
  const outcome = await runBlock({
    script: {
      source: DRIVER,
      name: "lspec_driver.lua",
      dir: dirname(abs)
    },
    projectRoot,
    globals: {
      SPEC_PATH: displayPath(abs)
    },
    stdout: (b) => chunks.push(new TextDecoder().decode(b))
  });
  if (outcome.status !== "returned" || typeof outcome.result !== "string") {
    const why = outcome.status === "failed" ? outcome.message : outcome.status;
    return {
      path,
      passed: 0,
      failed: 1,
      failures: [
        {
          name: "(spec file)",
          error: why
        }
      ],
      output: chunks
    };
  }
  const r = JSON.parse(outcome.result);
  const printed = chunks.join("").split("\n").filter((l) => l.length).map((l) => `  | ${l}`);
  return {
    path,
    passed: r.passed,
    failed: r.failed,
    failures: Array.isArray(r.failures) ? r.failures : [],
    output: [
      ...printed,
      ...Array.isArray(r.output) ? r.output : []
    ]
  };
}
function findSpecs(dir) {
  const out = [];
  const walk = (d) => {
    let entries;
    try {
      entries = [
        ...Deno.readDirSync(d)
      ];
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name < b.name ? -1 : 1)) {
      if (e.name.startsWith(".") || e.name === "node_modules") continue;
      const p = join(d, e.name);
      if (e.isDirectory) walk(p);
      else if (e.isFile && e.name.endsWith("_spec.lua")) out.push(p);
    }
  };
  walk(dir);
  return out;
}
function isDir(p) {
  try {
    return Deno.statSync(p).isDirectory;
  } catch {
    return false;
  }
}
function isFile(p) {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
}
async function testCommand(argv) {
  const parsed = parseFlags(argv, {
    project: {
      type: "string",
      short: "p"
    },
    help: {
      type: "boolean",
      short: "h"
    }
  }, {
    allowPositionals: true
  });
  const enc = new TextEncoder();
  const print = (s) => Deno.stdout.writeSync(enc.encode(s + "\n"));
  if (parsed.values.help) {
    print("Usage: agent-block test [-p DIR] [PATH|SUBSTRING]...\nRuns *_spec.lua files (all under the project when no PATH is given) and prints N passed, N failed.");
    return EXIT.OK;
  }
  const project = parsed.values.project ?? ".";
  if (!isDir(project)) throw new AgentBlockError(`project directory ${project} does not exist`);
  let files = [];
  const substrings = [];
  for (const p of parsed.positionals) {
    if (isDir(p)) files.push(...findSpecs(p));
    else if (isFile(p)) files.push(p);
    else substrings.push(p);
  }
  if (substrings.length) {
    const pool = parsed.positionals.length > substrings.length ? files : findSpecs(project);
    files = pool.filter((f) => substrings.some((s) => basename(f).includes(s)));
  } else if (parsed.positionals.length === 0) {
    files = findSpecs(project);
  }
  if (files.length === 0) throw new AgentBlockError("no spec files found (looked for *_spec.lua)");
  let passed = 0;
  let failed = 0;
  for (const f of files) {
    const r = await runSpecFile(f, project);
    print(`${displayPath(resolve(f))}`);
    for (const line of r.output) print(`  ${line}`);
    passed += r.passed;
    failed += r.failed;
  }
  print(`${passed} passed, ${failed} failed`);
  return failed > 0 ? EXIT.FAILED : EXIT.OK;
}
export {
  findSpecs,
  runSpecFile,
  testCommand
};
