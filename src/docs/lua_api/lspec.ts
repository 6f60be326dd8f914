/** Reference entries: the globals of a spec file (`agent-block test`, the embedded `lspec`). */
import type { Entry, Section } from "./types.ts";

const hook = (name: string, doc: string): Entry => ({
  kind: "function",
  name,
  doc,
  params: [{ name: "fn", type: "function", doc: "The hook." }],
  example: `${name}(function() std.env.set("MODE", "test") end)`,
});

export const LSPEC: Section = {
  id: "lspec",
  title: "Spec files (agent-block test)",
  file: "lspec",
  specOnly: true,
  doc: "`agent-block test` runs each `*_spec.lua` with these globals (a lust-compatible API) besides " +
    "everything a block has. A failing `it` never stops the file.",
  entries: [
    {
      kind: "value",
      name: "SPEC_PATH",
      type: "string",
      doc: "The spec file being run, as the runner names it.",
    },
    {
      kind: "value",
      name: "lust",
      type: "table",
      doc: 'The runner itself (`require("lspec")`), for code written against lust.',
    },
    {
      kind: "function",
      name: "describe",
      doc: "A group of tests; groups nest.",
      params: [
        { name: "name", type: "string", doc: "The group's name." },
        { name: "fn", type: "function", doc: "Declares its tests." },
      ],
      example:
        'describe("word_count", function()\n  it("counts", function() expect(1 + 1).to.equal(2) end)\nend)',
    },
    {
      kind: "function",
      name: "it",
      doc: "One test: it fails when `fn` raises.",
      params: [
        { name: "name", type: "string", doc: "The test's name." },
        { name: "fn", type: "function", doc: "The test." },
      ],
      example: 'it("adds", function() expect(tool.call("add", { a = 1, b = 2 }).sum).to.equal(3) end)',
    },
    hook(
      "before",
      "Runs before every `it` of the group it is declared in (and of nested groups), outermost first.",
    ),
    hook("after", "Runs after every `it` of its group."),
    hook("before_all", "Runs once, just before the group's first `it` (inside a `describe` only)."),
    hook("after_all", "Runs once, after the group's `describe` body, if an `it` of the group ran."),
    {
      kind: "class",
      name: "lspec.Assertion",
      doc:
        "What `expect(v)` answers: chain `.to`, `.to_not` (`.not_to`), `.be`, `.a`/`.an`, `.have`, ending " +
        "in a matcher.",
      fields: [
        { name: "to", type: "lspec.Assertion", doc: "Reads well; changes nothing." },
        { name: "to_not", type: "lspec.Assertion", doc: "Negates." },
        { name: "not_to", type: "lspec.Assertion", doc: "Negates." },
        {
          name: "be",
          type: "lspec.Assertion|fun(x: any): lspec.Assertion",
          doc: "`.be(x)`: identity (or `==`); also a chain word (`.be.truthy()`).",
        },
        {
          name: "equal",
          type: "fun(x: any, eps: number?): lspec.Assertion",
          doc: "Deep equality (numbers within `eps`).",
        },
        { name: "truthy", type: "fun(): lspec.Assertion", doc: "Neither nil nor false." },
        { name: "a", type: "fun(t: string): lspec.Assertion", doc: '`type(v) == t` (`"file"` for files).' },
        { name: "an", type: "fun(t: string): lspec.Assertion", doc: "Same as `a`." },
        { name: "exist", type: "fun(): lspec.Assertion", doc: "Not nil." },
        {
          name: "match",
          type: "fun(pattern: string): lspec.Assertion",
          doc: "`tostring(v)` matches the Lua pattern.",
        },
        {
          name: "have",
          type: "fun(x: any): lspec.Assertion",
          doc: "A table containing `x` (deep equality).",
        },
        {
          name: "fail",
          type: "{ with: fun(pattern: string): lspec.Assertion }|fun(): lspec.Assertion",
          doc: "`v` is a function that raises (`.fail.with(p)`: an error matching `p`).",
        },
      ],
    },
    {
      kind: "function",
      name: "expect",
      doc: "Starts an assertion about `v`.",
      params: [{ name: "v", type: "any", doc: "The value under test." }],
      returns: [{ type: "lspec.Assertion", doc: "The chain." }],
      example: 'expect(function() error("no") end).to.fail.with("no")\nexpect({ 1, 2 }).to.have(2)',
    },
  ],
};
