/** The few assertions the MCP tests use, on `node:assert` (the lockfile pins no jsr packages). */
import nodeAssert from "node:assert/strict";

export function assert(cond: unknown, msg?: string): asserts cond {
  nodeAssert.ok(cond, msg);
}
export function assertEquals(actual: unknown, expected: unknown, msg?: string): void {
  nodeAssert.deepStrictEqual(actual, expected, msg);
}
export function assertStringIncludes(actual: string, expected: string, msg?: string): void {
  nodeAssert.ok(
    actual.includes(expected),
    msg ?? `expected ${JSON.stringify(actual)} to contain ${JSON.stringify(expected)}`,
  );
}
export function assertMatch(actual: string, re: RegExp, msg?: string): void {
  nodeAssert.match(actual, re, msg);
}
