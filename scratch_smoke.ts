import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
for (const mode of ["auto", "legacy"] as const) {
  const c = new Client({ name: "t", version: "1" }, { capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} }, versionNegotiation: { mode } });
  c.setRequestHandler("sampling/createMessage", async (r) => ({ model: "m", role: "assistant", content: { type: "text", text: "HI " + JSON.stringify(r.params.messages[0].content) } }));
  c.setRequestHandler("elicitation/create", async (r) => ({ action: "accept", content: { name: "Ann" } }));
  c.setRequestHandler("roots/list", async () => ({ roots: [{ uri: "file:///tmp", name: "tmp" }] }));
  const t = new StdioClientTransport({ command: Deno.execPath(), args: ["run", "-A", "examples/echo_mcp_server.ts", "--test-tools", "--request-sampling"], env: { PATH: Deno.env.get("PATH")!, HOME: Deno.env.get("HOME")! }, stderr: "inherit" });
  const t0 = Date.now();
  await c.connect(t);
  console.log(mode, c.getNegotiatedProtocolVersion(), Date.now() - t0, "ms");
  console.log((await c.listTools()).tools.map((x) => x.name));
  console.log(JSON.stringify(await c.callTool({ name: "echo", arguments: { msg: "yo" } })));
  console.log(JSON.stringify(await c.callTool({ name: "sample", arguments: { prompt: "p" } })));
  console.log(JSON.stringify(await c.callTool({ name: "ask", arguments: { message: "who?" } })));
  console.log(JSON.stringify(await c.callTool({ name: "roots", arguments: {} })));
  console.log(JSON.stringify(await c.complete({ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "wa" } })));
  await c.close();
}
