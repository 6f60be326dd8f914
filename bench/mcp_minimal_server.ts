/**
 * The baseline of `bench/mcp_server_declared_bench.ts`: a minimal MCP server written directly on
 * the MCP TypeScript SDK (v2, the version agent-block pins), over stdio, with one tool `trivial`
 * that answers "ok". Nothing of agent-block is loaded.
 *
 * Run: `deno run -A bench/mcp_minimal_server.ts` (stdio; exits when stdin closes).
 */
import process from "node:process";
import { Server } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";

const server = new Server({ name: "minimal", version: "0" }, { capabilities: { tools: {} } });
server.setRequestHandler("tools/list", () => ({
  tools: [{ name: "trivial", description: "Answers ok.", inputSchema: { type: "object", properties: {} } }],
}));
server.setRequestHandler("tools/call", () => ({ content: [{ type: "text", text: "ok" }] }));
process.stdin.on("end", () => Deno.exit(0));
await server.connect(new StdioServerTransport());
