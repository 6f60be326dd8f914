/** The CLI's flag parser (src/cli/args.ts). */
import assert from "node:assert/strict";
import { didYouMean, parseFlags } from "../../src/cli/args.ts";
import { UsageError } from "../../src/errors.ts";

const OPTS = {
  script: { type: "string", short: "s" },
  label: { type: "string", multiple: true },
  help: { type: "boolean", short: "h" },
} as const;

Deno.test("parseFlags: long, long=, short, short-attached, repeatable, booleans, --", () => {
  const r = parseFlags(
    ["--script", "a.lua", "--label=k=v", "-h", "--label", "x=y", "--", "--not-a-flag"],
    OPTS,
    { allowPositionals: true },
  );
  assert.deepEqual(r.values, { script: "a.lua", label: ["k=v", "x=y"], help: true });
  assert.deepEqual(r.positionals, ["--not-a-flag"]);
  assert.deepEqual(parseFlags(["-sb.lua"], OPTS).values, { script: "b.lua" });
  assert.deepEqual(parseFlags(["--script=-odd.lua"], OPTS).values, { script: "-odd.lua" });
  assert.deepEqual(parseFlags(["-s", "-"], OPTS).values, { script: "-" });
});

Deno.test("parseFlags: a short flag written with '=' takes what follows the '=', as clap does", () => {
  assert.deepEqual(parseFlags(["-s=x.lua"], OPTS).values, { script: "x.lua" });
  assert.deepEqual(parseFlags(["-s=-odd.lua"], OPTS).values, { script: "-odd.lua" }); // still a value
  assert.deepEqual(parseFlags(["-s="], OPTS).values, { script: "" });
  assert.deepEqual(parseFlags(["-s=a=b"], OPTS).values, { script: "a=b" }); // only the first '='
  assert.deepEqual(parseFlags(["-hs=x.lua"], OPTS).values, { help: true, script: "x.lua" }); // in a group
  // What follows `--` is no flag: it is not rewritten.
  const r = parseFlags(["-s=x", "--", "-s=y"], OPTS, { allowPositionals: true });
  assert.deepEqual(r.values, { script: "x" });
  assert.deepEqual(r.positionals, ["-s=y"]);
  // A boolean takes no value: `-h=1` is refused naming it, not read as `-h -= -1`.
  assert.throws(
    () => parseFlags(["-h=1"], OPTS, { command: "knl" }),
    (e) => e instanceof UsageError && e.message === "knl: -h (--help) takes no value, got '-h=1'",
  );
});

Deno.test("parseFlags: every malformed command line is a UsageError naming the flag", () => {
  const bad: [string[], RegExp][] = [
    [["--nope"], /Unknown option '--nope'/],
    [["-x"], /Unknown option '-x'/],
    [["--script"], /'-s, --script <value>' argument missing/],
    [["-s", "--help"], /Option '-s' argument is ambiguous/],
    [["--help=yes"], /'-h, --help' does not take an argument/],
    [["-hx"], /Unknown option '-x'/],
    [["stray"], /Unexpected argument 'stray'/],
  ];
  for (const [argv, re] of bad) {
    assert.throws(
      () => parseFlags(argv, OPTS),
      (e) => e instanceof UsageError && re.test(e.message),
      argv.join(" "),
    );
  }
});

Deno.test("parseFlags: a subcommand's name prefixes its usage errors", () => {
  assert.throws(
    () => parseFlags(["--nope"], OPTS, { command: "knl" }),
    (e) => e instanceof UsageError && e.message.startsWith("knl: Unknown option '--nope'"),
  );
});

Deno.test("didYouMean: the nearest candidate within a few edits, case ignored; nothing when far or short", () => {
  const flags = ["prompt", "project", "context", "label", "limit"];
  assert.equal(didYouMean("promt", flags), "prompt");
  assert.equal(didYouMean("Prompt", flags), "prompt"); // case only
  assert.equal(didYouMean("proejct", flags), "project"); // two letters swapped: one edit
  assert.equal(didYouMean("lable", flags), "label");
  assert.equal(didYouMean("limt", flags), "limit");
  assert.equal(didYouMean("frobnicate", flags), undefined);
  assert.equal(didYouMean("x", ["y", "z"]), undefined); // a one-letter word is never "corrected"
  assert.equal(didYouMean("ab", ["abc"]), "abc");
  assert.equal(didYouMean("sesions", ["sessions", "show", "export"]), "sessions");
  assert.equal(didYouMean("prompt", flags), undefined); // not misspelt
});

Deno.test("parseFlags: an unknown long flag near a known one says which", () => {
  assert.throws(
    () => parseFlags(["--scirpt", "a.lua"], OPTS),
    (e) => e instanceof UsageError && e.message === "Unknown option '--scirpt' (did you mean '--script'?)",
  );
  assert.throws(
    () => parseFlags(["--labl=x"], OPTS, { command: "knl" }),
    (e) => e instanceof UsageError && e.message === "knl: Unknown option '--labl' (did you mean '--label'?)",
  );
  assert.throws(
    () => parseFlags(["--zzz"], OPTS),
    (e) => e instanceof UsageError && e.message === "Unknown option '--zzz'",
  );
});
