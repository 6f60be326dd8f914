/**
 * The MCP Echo Harness: a self-contained reference MCP server for exercising agent-block's MCP
 * client over stdio and HTTP, in both protocol eras (2025-era `initialize` clients and
 * 2026-07-28 clients are served from one factory).
 *
 * Surface: tools `echo {msg}` and `slow_echo {msg, steps}` (one progress notification per
 * 100 ms step when the request carries a progress token); resources `text://hello` and
 * `text://note` plus the template `note://{id}`; prompt `greet {name}` (with completion on
 * `name`); logging.
 *
 * Flags:
 *   --transport stdio|http   (default stdio)
 *   --port N                 HTTP port, 0 = ephemeral (default 8765); prints
 *                            `ECHO_MCP_URL=http://127.0.0.1:<port>/mcp` on stdout
 *   --emit-logs              each `echo` sends 5 log notifications (logger `echo`, data `tick N`)
 *                            `--log-interval-ms` apart (default 1000) before it answers
 *   --request-sampling       each `echo` asks the client for a sampling round trip first and
 *                            appends `sampling: <text>` to its answer
 *   --test-tools             adds the tools the test suite needs: `noop`, `meta`, `sample`, `ask`,
 *                            `ask_url`, `roots`, `bump`, `bump_lists`, `touch`, `hang`, `exit_now`,
 *                            `exit_mid_stream` (a progress notification, then the process exits)
 *   --cancel-log PATH        `hang` appends `started <request id>` to PATH when called and
 *                            `cancelled <request id>` when cancelled; over HTTP, a 2026-era
 *                            `hang` call its client closed before the server got to it (a
 *                            loaded machine) is never started, and is recorded as
 *                            `cancelled <request id> before it started`
 *   --step-ms N              length of a `slow_echo` step (default 100)
 *   --exit-on-stdin-close    (http) exit when stdin reaches EOF, so a server started by a test
 *                            ends with its parent even if the parent dies
 *
 * Server→client input (sampling, elicitation, roots) is written once with `inputRequired`: a
 * 2026-07-28 client fulfils it as `input_required` round trips, and the SDK's legacy shim turns
 * it into real push requests for 2025 clients. Binds 127.0.0.1 only. Exits when stdin closes
 * (stdio) or on SIGINT/SIGTERM (http).
 */
import process from "node:process";
import * as z from "zod";
import {
  completable,
  inputRequired,
  inputResponse,
  McpServer,
  ResourceTemplate,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { type HybridServer, serveHybrid } from "./lib/mcp_http_serve.ts";

interface Flags {
  transport: "stdio" | "http";
  port: number;
  emitLogs: boolean;
  logIntervalMs: number;
  requestSampling: boolean;
  testTools: boolean;
  cancelLog?: string;
  stepMs: number;
  exitOnStdinClose: boolean;
}

function parseFlags(argv: string[]): Flags {
  const f: Flags = {
    transport: "stdio",
    port: 8765,
    emitLogs: false,
    logIntervalMs: 1000,
    requestSampling: false,
    testTools: false,
    stepMs: 100,
    exitOnStdinClose: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`echo_mcp_server: ${a} needs a value`);
      return v;
    };
    if (a === "--transport") {
      const v = value();
      if (v !== "stdio" && v !== "http") {
        throw new Error(`echo_mcp_server: --transport must be stdio or http`);
      }
      f.transport = v;
    } else if (a === "--port") f.port = Number(value());
    else if (a === "--emit-logs") f.emitLogs = true;
    else if (a === "--log-interval-ms") f.logIntervalMs = Number(value());
    else if (a === "--request-sampling") f.requestSampling = true;
    else if (a === "--test-tools") f.testTools = true;
    else if (a === "--cancel-log") f.cancelLog = value();
    else if (a === "--step-ms") f.stepMs = Number(value());
    else if (a === "--exit-on-stdin-close") f.exitOnStdinClose = true;
    else throw new Error(`echo_mcp_server: unknown flag ${a}`);
  }
  return f;
}

const flags = parseFlags(Deno.args);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const text = (t: string) => ({ type: "text" as const, text: t });

/** Live server instances that can carry unsolicited notifications (stdio connection, legacy HTTP sessions). */
const liveInstances = new Set<McpServer>();
let http: HybridServer | undefined;
/** Tools added by `bump`; module state, because modern HTTP builds an instance per request. */
const extraTools: string[] = [];

function notifyToolsChanged(): void {
  for (const s of liveInstances) s.sendToolListChanged();
  http?.modern.notify.toolsChanged();
}
function notifyListsChanged(): void {
  for (const s of liveInstances) {
    s.sendResourceListChanged();
    s.sendPromptListChanged();
  }
  http?.modern.notify.resourcesChanged();
  http?.modern.notify.promptsChanged();
}
function notifyResourceUpdated(uri: string): void {
  for (const s of liveInstances) s.server.sendResourceUpdated({ uri }).catch(() => undefined);
  http?.modern.notify.resourceUpdated(uri);
}

const RESOURCES: Record<string, string> = { "text://hello": "hello world", "text://note": "a note" };

/** Modern HTTP requests whose `hang` call started (the others were never run; see `--cancel-log`). */
const hangStarted = new WeakSet<Request>();

/** A modern `hang` call that its client closed before it started: recorded as cancelled. */
function onAbandoned(request: Request, message: unknown): void {
  const m = message as { id?: unknown; method?: unknown; params?: { name?: unknown } } | undefined;
  const tool = m ? m.method === "tools/call" && m.params?.name : request.headers.get("mcp-name");
  if (!flags.cancelLog || tool !== "hang" || hangStarted.has(request)) return;
  Deno.writeTextFileSync(flags.cancelLog, `cancelled ${m?.id ?? "?"} before it started\n`, { append: true });
}

function build(request?: Request): McpServer {
  const server = new McpServer(
    { name: "echo-mcp-server", version: "1.0.0" },
    {
      capabilities: {
        logging: {},
        tools: { listChanged: true },
        resources: { listChanged: true },
        prompts: { listChanged: true },
      },
    },
  );

  server.registerTool("echo", {
    description: "Echo back the message",
    inputSchema: z.object({ msg: z.string() }),
  }, async ({ msg }, ctx) => {
    const content = [text(msg)];
    if (flags.requestSampling) {
      const got = inputResponse(ctx.mcpReq.inputResponses, "sample");
      if (got.kind !== "sampling") {
        return inputRequired({
          inputRequests: {
            sample: inputRequired.createMessage({
              messages: [{ role: "user", content: text("say hi") }],
              maxTokens: 256,
            }),
          },
        });
      }
      const c = got.result.content;
      const sampled = !Array.isArray(c) && c.type === "text" ? c.text : JSON.stringify(c);
      console.error(`echo_mcp_server: sampling result: ${sampled}`);
      content.push(text(`sampling: ${sampled}`));
    }
    if (flags.emitLogs) {
      for (let n = 1; n <= 5; n++) {
        await ctx.mcpReq.log("info", `tick ${n}`, "echo");
        if (n < 5) await sleep(flags.logIntervalMs);
      }
    }
    return { content };
  });

  server.registerTool("slow_echo", {
    description: "Echo back the message after `steps` steps of 100 ms, reporting progress",
    inputSchema: z.object({ msg: z.string(), steps: z.number().int().min(1).default(5) }),
  }, async ({ msg, steps }, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      await sleep(flags.stepMs);
      if (token !== undefined) {
        await ctx.mcpReq.notify({
          method: "notifications/progress",
          params: { progressToken: token, progress: i, total: steps, message: `step ${i}/${steps}` },
        });
      }
    }
    return { content: [text(msg)] };
  });

  for (const [uri, body] of Object.entries(RESOURCES)) {
    server.registerResource(uri.slice(7), uri, { mimeType: "text/plain" }, (u) => ({
      contents: [{ uri: u.href, mimeType: "text/plain", text: body }],
    }));
  }
  server.registerResource(
    "note",
    new ResourceTemplate("note://{id}", {
      list: undefined,
      complete: { id: (v) => ["alpha", "beta", "gamma"].filter((x) => x.startsWith(v)) },
    }),
    { mimeType: "text/plain" },
    (u, vars) => ({ contents: [{ uri: u.href, mimeType: "text/plain", text: `note ${vars.id}` }] }),
  );

  server.registerPrompt("greet", {
    description: "Greet someone",
    argsSchema: z.object({
      name: completable(z.string(), (v) => ["world", "wanda", "walter"].filter((x) => x.startsWith(v))),
    }),
  }, ({ name }) => ({
    messages: [{ role: "user", content: text(`hello, ${name || "world"}`) }],
  }));

  if (flags.testTools) addTestTools(server, request);
  for (const name of extraTools) {
    server.registerTool(name, { description: "added by bump" }, () => ({ content: [text(name)] }));
  }
  return server;
}

function addTestTools(server: McpServer, request?: Request): void {
  server.registerTool(
    "noop",
    { description: "Does nothing", _meta: { group: "bench" } },
    () => ({ content: [text("ok")] }),
  );

  server.registerTool(
    "meta",
    { description: "Answers the request's _meta as JSON (traceparent, progress token)" },
    (ctx: ServerContext) => ({ content: [text(JSON.stringify(ctx.mcpReq._meta ?? {}))] }),
  );

  server.registerTool("sample", {
    description: "Asks the client's model",
    inputSchema: z.object({ prompt: z.string() }),
  }, ({ prompt }, ctx) => {
    const got = inputResponse(ctx.mcpReq.inputResponses, "s");
    if (got.kind !== "sampling") {
      return inputRequired({
        inputRequests: {
          s: inputRequired.createMessage({
            messages: [{ role: "user", content: text(prompt) }],
            maxTokens: 100,
            systemPrompt: "be brief",
          }),
        },
      });
    }
    const c = got.result.content;
    const t = !Array.isArray(c) && c.type === "text" ? c.text : JSON.stringify(c);
    return { content: [text(`${got.result.model}: ${t}`)] };
  });

  server.registerTool("ask", {
    description: "Asks the user a question (form elicitation)",
    inputSchema: z.object({ message: z.string() }),
  }, ({ message }, ctx) => {
    const got = inputResponse(ctx.mcpReq.inputResponses, "who");
    if (got.kind !== "elicit") {
      return inputRequired({
        inputRequests: {
          who: inputRequired.elicit({
            message,
            requestedSchema: {
              type: "object",
              properties: { name: { type: "string" } },
              required: ["name"],
            },
          }),
        },
      });
    }
    return { content: [text(JSON.stringify({ action: got.action, content: got.content ?? null }))] };
  });

  server.registerTool("ask_url", { description: "URL-mode elicitation" }, (ctx: ServerContext) => {
    const got = inputResponse(ctx.mcpReq.inputResponses, "url");
    if (got.kind !== "elicit") {
      return inputRequired({
        inputRequests: {
          url: inputRequired.elicitUrl({ message: "open this", url: "https://example.com/consent" }),
        },
      });
    }
    return { content: [text(got.action)] };
  });

  server.registerTool("roots", { description: "Lists the client's roots" }, (ctx: ServerContext) => {
    const got = inputResponse(ctx.mcpReq.inputResponses, "r");
    if (got.kind !== "roots") return inputRequired({ inputRequests: { r: inputRequired.listRoots() } });
    return { content: [text(JSON.stringify(got.roots))] };
  });

  server.registerTool("bump", { description: "Adds a tool and announces the change" }, () => {
    const name = `extra_${extraTools.length + 1}`;
    extraTools.push(name);
    for (const s of liveInstances) {
      s.registerTool(name, { description: "added by bump" }, () => ({ content: [text(name)] }));
    }
    notifyToolsChanged();
    return { content: [text(name)] };
  });

  server.registerTool("bump_lists", { description: "Announces resource and prompt list changes" }, () => {
    setTimeout(notifyListsChanged, 20);
    return { content: [text("announced")] };
  });

  server.registerTool("touch", {
    description: "Announces that a resource changed",
    inputSchema: z.object({ uri: z.string() }),
  }, ({ uri }) => {
    setTimeout(() => notifyResourceUpdated(uri), 20);
    return { content: [text("touched")] };
  });

  server.registerTool(
    "hang",
    { description: "Never answers; records its cancellation" },
    (ctx: ServerContext) => {
      if (request) hangStarted.add(request);
      // A heartbeat (progress, when the request has a token) lets an HTTP server notice a client
      // that closed the request's stream, which is how 2026-07-28 HTTP clients cancel.
      if (flags.cancelLog) {
        Deno.writeTextFileSync(flags.cancelLog, `started ${ctx.mcpReq.id}\n`, { append: true });
      }
      const token = ctx.mcpReq._meta?.progressToken;
      let beat = 0;
      const heartbeat = token === undefined ? undefined : setInterval(() => {
        ctx.mcpReq.notify({
          method: "notifications/progress",
          params: { progressToken: token, progress: ++beat },
        })
          .catch(() => undefined);
      }, 200);
      return new Promise((_resolve, reject) => {
        const onAbort = () => {
          clearInterval(heartbeat);
          if (flags.cancelLog) {
            Deno.writeTextFileSync(flags.cancelLog, `cancelled ${ctx.mcpReq.id}\n`, { append: true });
          }
          reject(new Error("cancelled"));
        };
        if (ctx.mcpReq.signal.aborted) onAbort();
        else ctx.mcpReq.signal.addEventListener("abort", onAbort, { once: true });
      });
    },
  );

  server.registerTool("exit_now", { description: "Exits the process mid-call" }, () => {
    console.error("echo_mcp_server: exiting mid-call");
    Deno.exit(3);
  });

  server.registerTool(
    "exit_mid_stream",
    { description: "Sends a progress notification (over HTTP: the answer's stream has begun), then exits" },
    async (ctx: ServerContext) => {
      const token = ctx.mcpReq._meta?.progressToken;
      if (token !== undefined) {
        await ctx.mcpReq.notify({
          method: "notifications/progress",
          params: { progressToken: token, progress: 1 },
        });
      }
      await sleep(200);
      console.error("echo_mcp_server: exiting mid-stream");
      Deno.exit(3);
    },
  );
}

if (flags.transport === "stdio") {
  serveStdio(() => {
    const s = build();
    liveInstances.add(s);
    return s;
  });
  process.stdin.on("end", () => Deno.exit(0));
} else {
  http = await serveHybrid(
    (era, request) => {
      const s = build(request);
      if (era === "legacy") {
        liveInstances.add(s);
        s.server.onclose = () => liveInstances.delete(s);
      }
      return s;
    },
    flags.port,
    undefined,
    onAbandoned,
  );
  console.log(`ECHO_MCP_URL=http://127.0.0.1:${http.port}/mcp`);
  if (flags.exitOnStdinClose) {
    (async () => {
      for await (const _ of Deno.stdin.readable) { /* only EOF matters */ }
      Deno.exit(0);
    })();
  }
  const stop = () => {
    http?.shutdown().finally(() => Deno.exit(0));
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
}
