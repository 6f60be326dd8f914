/**
 * Block headers as MCP declarations (`src/blocks/declaration.ts`) and the schema checks the
 * server applies to a declared tool's arguments (`src/mcp_server/schema_check.ts`): what each
 * tag builds, and every malformed header reported with its line.
 */
import assert from "node:assert/strict";
import { matchTemplate, parseDeclaration } from "../../src/blocks/declaration.ts";
import { schemaProblem } from "../../src/mcp_server/schema_check.ts";
import { scanBlocks } from "../../src/blocks/registry.ts";
import { tempDir } from "../helpers.ts";
import { join } from "node:path";

Deno.test("declaration: a tool's @param lines build its input schema; @output and annotations kept", () => {
  const { declaration, error } = parseDeclaration(`#!/usr/bin/env agent-block
--- Adds two numbers.
---@tool add
---@title Adder
---@param a number the first
---@param b? integer the second
---@param mode "fast"|"slow" how
---@param tags string[] labels
---@annotation readOnlyHint true
---@output {"type": "object",
---   "properties": {"sum": {"type": "number"}}, "required": ["sum"]}
return _ARGS.a + (_ARGS.b or 0)
`);
  assert.deepEqual(error, undefined);
  assert.deepEqual(declaration, {
    kind: "tool",
    name: "add",
    title: "Adder",
    description: "Adds two numbers.",
    inputSchema: {
      type: "object",
      properties: {
        a: { type: "number", description: "the first" },
        b: { type: "integer", description: "the second" },
        mode: { type: "string", enum: ["fast", "slow"], description: "how" },
        tags: { type: "array", items: { type: "string" }, description: "labels" },
      },
      required: ["a", "mode", "tags"],
    },
    outputSchema: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
    annotations: { readOnlyHint: true },
  });
});

Deno.test("declaration: resources, templates and prompts", () => {
  assert.deepEqual(
    parseDeclaration("--- Static.\n---@resource test://a Name A\n---@mime image/png\nreturn ''").declaration,
    {
      kind: "resource",
      uri: "test://a",
      template: false,
      name: "Name A",
      description: "Static.",
      mimeType: "image/png",
    },
  );
  const t = parseDeclaration("---@resource test://t/{id}/data\nreturn ''").declaration;
  assert.deepEqual(t?.kind === "resource" && t.template, true);
  assert.deepEqual(matchTemplate("test://t/{id}/data", "test://t/12%203/data"), { id: "12 3" });
  assert.deepEqual(matchTemplate("test://t/{id}/data", "test://t/1/2/data"), undefined);
  assert.deepEqual(
    parseDeclaration(
      "--- Greets.\n---@prompt greet\n---@param who string whom\n---@param tone? string\nreturn ''",
    )
      .declaration,
    {
      kind: "prompt",
      name: "greet",
      description: "Greets.",
      arguments: [{ name: "who", description: "whom", required: true }, { name: "tone", required: false }],
    },
  );
  // A plain block (and an editor's own tags) declares nothing.
  assert.deepEqual(parseDeclaration("-- Just a block.\n---@diagnostic disable\nreturn 1"), {
    declaration: undefined,
  });
});

Deno.test("declaration: a malformed header is reported with its line, and the block declares nothing", () => {
  const cases: [string, number, string][] = [
    ["--- x\n---@tool t\n---@param a nmber\nreturn 1", 3, "unknown type 'nmber'"],
    ["---@tool t\n---@prompt p\nreturn 1", 2, "one block declares one thing"],
    ["---@tool t\n---@output {not json}\nreturn 1", 2, "not valid JSON"],
    ["---@tool b@d\nreturn 1", 1, "'b@d' is not a tool name"],
    ["---@resource no-scheme\nreturn 1", 1, "is not a URI"],
    ["---@prompt p\n---@param n number\nreturn 1", 2, "a prompt's arguments are strings"],
    ["---@prompt p\n---@param n string[]\nreturn 1", 2, "a prompt's arguments are strings"],
    ["---@resource test://x\n---@annotation readOnlyHint true\nreturn 1", 2, "does not apply to a @resource"],
    ["---@tool t\n---@annotation readOnlyHint maybe\nreturn 1", 2, "takes true or false"],
    ["---@tool t\n---@param a string\n---@param a number\nreturn 1", 3, "declared twice"],
    ["---@tool t\n---@watch notes\nreturn 1", 2, "@watch does not apply to a @tool"],
    ["---@resource n://x\n---@watch\nreturn 1", 2, "@watch needs a path"],
    ["---@resource n://x\n---@watch /etc/passwd\nreturn 1", 2, "relative to the project root"],
    ["---@resource n://x\n---@watch notes/../../x\nreturn 1", 2, "no '..' segment"],
    ["---@resource n://{id}\n---@watch notes/{day}.txt\nreturn 1", 2, "{day} is not a variable of n://{id}"],
    ['---@prompt p\n---@param a string\n---@examples b ["x"]\nreturn 1', 3, "@examples b: no @param b"],
    ["---@prompt p\n---@param a string\n---@examples a [1]\nreturn 1", 3, "the values must be strings"],
    ["---@prompt p\n---@param a string\n---@examples a []\nreturn 1", 3, "a non-empty JSON array"],
    ["---@prompt p\n---@param a string\n---@examples a [x]\nreturn 1", 3, "not valid JSON"],
    ['---@prompt p\n---@param a "x"|"y"\n---@examples a ["z"]\nreturn 1', 3, "'z' is not one of its values"],
    ["---@tool t\n---@input lshape a/b\nreturn 1", 2, "'lshape MODULE[:FIELD]'"],
    ["---@tool t\n---@input lshape m\n---@input lshape n\nreturn 1", 3, "@input is given twice"],
    ["---@tool t\n---@param a string\n---@input lshape m\nreturn 1", 2, "@param and @input both"],
    ["---@prompt p\n---@input lshape m\nreturn 1", 2, "@input does not apply to a @prompt"],
    ['---@resource n://{id}\n---@examples day ["x"]\nreturn 1', 2, "n://{id} has no variable {day}"],
    ['---@tool t\n---@input {"type": "object"}\n---@examples a [1]\nreturn 1', 3, "with @input"],
  ];
  for (const [src, line, text] of cases) {
    const r = parseDeclaration(src);
    assert.deepEqual(r.declaration, undefined, src);
    assert.deepEqual(r.error?.line, line, src);
    assert.ok(r.error!.message.includes(text), `${src}: ${r.error!.message}`);
  }
});

Deno.test("declaration: the registry carries each block's declaration or its error", async () => {
  const dir = await tempDir();
  Deno.writeTextFileSync(join(dir, "good.lua"), "---@tool good\nreturn 1\n");
  Deno.writeTextFileSync(join(dir, "bad.lua"), "-- fine\n---@tool bad\n---@param x whatever\nreturn 1\n");
  Deno.writeTextFileSync(join(dir, "plain.lua"), "-- plain\nreturn 1\n");
  const blocks = Object.fromEntries(scanBlocks([{ tier: "extra", dir }]).map((b) => [b.name, b]));
  assert.deepEqual(blocks.good.declaration?.kind, "tool");
  assert.deepEqual(blocks.bad.declaration, undefined);
  assert.deepEqual(blocks.bad.declarationError?.line, 3);
  assert.deepEqual(blocks.plain.declaration, undefined);
  assert.deepEqual(blocks.plain.declarationError, undefined);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("schema check: the first problem names the field", () => {
  const schema = {
    type: "object",
    $defs: { addr: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
    properties: {
      n: { type: "integer", minimum: 1 },
      mode: { enum: ["a", "b"] },
      tags: { type: "array", items: { type: "string" } },
      addr: { $ref: "#/$defs/addr" },
    },
    required: ["n"],
    additionalProperties: false,
  };
  assert.deepEqual(
    schemaProblem(schema, { n: 2, mode: "a", tags: ["x"], addr: { city: "Oslo" } }),
    undefined,
  );
  assert.deepEqual(schemaProblem(schema, {}), "n: is required");
  assert.deepEqual(schemaProblem(schema, { n: "2" }), "n: expected integer, got string");
  assert.deepEqual(schemaProblem(schema, { n: 1.5 }), "n: expected integer, got number");
  assert.deepEqual(schemaProblem(schema, { n: 0 }), "n: must be >= 1");
  assert.deepEqual(schemaProblem(schema, { n: 1, mode: "c" }), 'mode: must be one of "a", "b", got "c"');
  assert.deepEqual(schemaProblem(schema, { n: 1, tags: ["x", 2] }), "tags[1]: expected string, got integer");
  assert.deepEqual(schemaProblem(schema, { n: 1, addr: {} }), "addr.city: is required");
  assert.deepEqual(
    schemaProblem(schema, { n: 1, extra: true }),
    "extra: is not a known field (known: n, mode, tags, addr)",
  );
  assert.deepEqual(
    schemaProblem({ if: { required: ["p"] }, then: { required: ["q"] }, else: { required: ["r"] } }, {
      p: 1,
    }),
    "q: is required",
  );
});

Deno.test("declaration: a resource's @watch paths are kept, a template's variables allowed", () => {
  const { declaration, error } = parseDeclaration(
    "--- A note.\n---@resource note://{id} note\n---@watch notes/{id}.txt\n---@watch shared\nreturn 1",
  );
  assert.deepEqual(error, undefined);
  assert.deepEqual(declaration, {
    kind: "resource",
    uri: "note://{id}",
    template: true,
    name: "note",
    description: "A note.",
    mimeType: "text/plain",
    watch: ["notes/{id}.txt", "shared"],
  });
});

Deno.test("declaration: @input lshape MODULE[:FIELD] records where the shape is", () => {
  const a = parseDeclaration("--- Orders.\n---@tool order\n---@input lshape shop.schemas:Order\nreturn 1");
  assert.deepEqual(a.error, undefined);
  assert.deepEqual(a.declaration, {
    kind: "tool",
    name: "order",
    description: "Orders.",
    inputSchema: { type: "object" },
    inputLshape: { module: "shop.schemas", field: "Order", line: 3 },
  });
  const b = parseDeclaration("---@tool order\n---@input lshape order_input\nreturn 1");
  assert.deepEqual((b.declaration as { inputLshape?: unknown }).inputLshape, {
    module: "order_input",
    line: 2,
  });
});
