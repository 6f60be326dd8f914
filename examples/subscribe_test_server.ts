/**
 * MCP Resource Subscribe Smoke Server: an HTTP MCP server for exercising
 * `mcp.subscribe_resource` / `mcp.on_resource_update`, in both protocol eras.
 *
 * Declares `resources` with `subscribe`; serves `sub://counter` and `sub://clock`. About 50 ms
 * after each subscription (2025 `resources/subscribe`, or a 2026-07-28 `subscriptions/listen`
 * naming resources) it sends `notifications/resources/updated` for that URI. With
 * `--interval MS` it also sends one for every subscribed URI every MS milliseconds.
 *
 * Flags: `--port N` (default 0 = ephemeral), `--interval MS` (default 0 = off),
 * `--exit-on-stdin-close` (exit when stdin reaches EOF, for servers started by tests).
 * Prints `SUBSCRIBE_TEST_SERVER_URL=http://127.0.0.1:<port>/mcp` on stdout; binds 127.0.0.1;
 * runs until SIGINT/SIGTERM.
 */
import { McpServer } from "@modelcontextprotocol/server";
import { type HybridServer, serveHybrid } from "./lib/mcp_http_serve.ts";

let port = 0;
let interval = 0;
let exitOnStdinClose = false;
for (let i = 0; i < Deno.args.length; i++) {
  const a = Deno.args[i];
  if (a === "--port") port = Number(Deno.args[++i]);
  else if (a === "--interval") interval = Number(Deno.args[++i]);
  else if (a === "--exit-on-stdin-close") exitOnStdinClose = true;
  else throw new Error(`subscribe_test_server: unknown flag ${a}`);
}

const URIS = ["sub://counter", "sub://clock"];
/** Legacy subscriptions: session server → URIs. */
const legacySubs = new Map<McpServer, Set<string>>();
/** URIs some modern `subscriptions/listen` stream asked for. */
const modernSubs = new Set<string>();
let counter = 0;

function build(): McpServer {
  const server = new McpServer(
    { name: "subscribe-test-server", version: "1.0.0" },
    { capabilities: { resources: { subscribe: true, listChanged: true } } },
  );
  for (const uri of URIS) {
    server.registerResource(uri.slice(6), uri, { mimeType: "text/plain" }, (u) => ({
      contents: [{
        uri: u.href,
        mimeType: "text/plain",
        text: uri === "sub://clock" ? new Date().toISOString() : String(counter),
      }],
    }));
  }
  server.server.setRequestHandler("resources/subscribe", (req) => {
    const uri = req.params.uri;
    let set = legacySubs.get(server);
    if (!set) legacySubs.set(server, set = new Set());
    set.add(uri);
    setTimeout(() => server.server.sendResourceUpdated({ uri }).catch(() => undefined), 50);
    return {};
  });
  server.server.setRequestHandler("resources/unsubscribe", (req) => {
    legacySubs.get(server)?.delete(req.params.uri);
    return {};
  });
  return server;
}

const http: HybridServer = await serveHybrid(
  (era) => {
    const s = build();
    if (era === "legacy") s.server.onclose = () => legacySubs.delete(s);
    return s;
  },
  port,
  (body) => {
    const b = body as { method?: string; params?: { notifications?: { resourceSubscriptions?: string[] } } };
    if (b?.method !== "subscriptions/listen") return;
    for (const uri of b.params?.notifications?.resourceSubscriptions ?? []) {
      modernSubs.add(uri);
      setTimeout(() => http.modern.notify.resourceUpdated(uri), 50);
    }
  },
);

if (interval > 0) {
  setInterval(() => {
    counter++;
    for (const [s, uris] of legacySubs) {
      for (const uri of uris) s.server.sendResourceUpdated({ uri }).catch(() => undefined);
    }
    for (const uri of modernSubs) http.modern.notify.resourceUpdated(uri);
  }, interval);
}

console.log(`SUBSCRIBE_TEST_SERVER_URL=http://127.0.0.1:${http.port}/mcp`);
if (exitOnStdinClose) {
  (async () => {
    for await (const _ of Deno.stdin.readable) { /* only EOF matters */ }
    Deno.exit(0);
  })();
}
const stop = () => {
  http.shutdown().finally(() => Deno.exit(0));
};
Deno.addSignalListener("SIGINT", stop);
Deno.addSignalListener("SIGTERM", stop);
