/**
 * Helpers for the A2A tests: a project of small blocks, `agent-block a2a serve` as a real process,
 * the SDK's own client for it, and an agent built with the SDK's own server (Express, as its
 * samples do) for our client to call.
 *
 * Waits are on conditions (a line on stderr, a file, a state), never sleeps.
 */
import { join } from "node:path";
// deno-lint-ignore no-import-prefix -- test-only package, kept out of deno.json's import map (tools/gen_run_lock.ts)
import express from "npm:express@5.3.0";
import type { Server } from "node:http";
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
} from "@a2a-js/sdk/server";
import { type AgentCard, type Part, Role, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { tempProject } from "../helpers.ts";
import { type HttpServerProc, serverCommand, startListening } from "../mcp_server/mcp_helpers.ts";

/** The blocks every A2A server test serves. */
export const A2A_BLOCKS: Record<string, string> = {
  "blocks/shout.lua": "-- Shouts the prompt back.\nreturn 'echo: ' .. string.upper(_PROMPT or '')\n",
  "blocks/steps.lua": "-- Stages an artifact, then returns.\n" +
    'bus.emit("artifact", { name = "note", content = "half way" })\nreturn "done"\n',
  "blocks/busy.lua": "-- Starts a sleeper, writes its pid under _PROMPT, then waits for ever.\n" +
    "local dir = assert(_PROMPT)\n" +
    'local _s = io.popen("echo $$ > \'" .. dir .. "/sleeper.pid.tmp\'; mv \'" .. dir .. "/sleeper.pid.tmp\' \'" .. dir .. "/sleeper.pid\'; exec sleep 300")\n' +
    "local x = 0\nwhile true do x = x + 1 end\n",
  "blocks/fails.lua": "-- Raises.\nerror('broken on purpose')\n",
  "blocks/context.lua": "-- Returns its _PROMPT and _CONTEXT.\n" +
    "return std.json.encode({ prompt = _PROMPT or 'none', context = _CONTEXT or 'none' })\n",
  "blocks/notes.lua": "-- Writes a note to a kernel session, then returns.\n" +
    'require("knl").session({ owner = "docs", store = "mem" }, function(s)\n' +
    '  s:append({ kind = "note", data = { text = "step one" } })\nend)\nreturn "noted"\n',
};

/** A project with `A2A_BLOCKS` and an empty home. */
export async function a2aProject(): Promise<{ root: string; home: string }> {
  const root = await tempProject(A2A_BLOCKS, "ab_a2a_");
  const home = join(root, ".home");
  Deno.mkdirSync(join(home, "blocks"), { recursive: true });
  return { root, home };
}

/** Starts `agent-block a2a serve -p root --bind 127.0.0.1:0 ...extra`. */
export function startA2aServer(root: string, home: string, extra: string[] = []): Promise<HttpServerProc> {
  return startListening(serverCommand(["-p", root, "--bind", "127.0.0.1:0", ...extra], "a2a serve"), home);
}

/** The SDK's client for the agent at `base`, preferring `binding`, with `headers` on every request. */
export async function sdkClient(
  base: string,
  binding: "JSONRPC" | "HTTP+JSON",
  headers: Record<string, string> = {},
): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const h = new Headers(init?.headers);
    for (const [k, v] of Object.entries(headers)) h.set(k, v);
    return fetch(input, { ...init, headers: h });
  };
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    preferredTransports: [binding],
    cardResolver: new (await import("@a2a-js/sdk/client")).DefaultAgentCardResolver({ fetchImpl }),
  }));
  return await factory.createFromUrl(base);
}

/** A user message in the SDK's form. */
export function userMessage(text: string, metadata?: Record<string, unknown>) {
  return {
    messageId: crypto.randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [{
      content: { $case: "text" as const, value: text },
      metadata: undefined,
      filename: "",
      mediaType: "",
    }],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A send request in the SDK's form. */
export function sendRequest(text: string, skill?: string) {
  return {
    tenant: "",
    message: userMessage(text, skill ? { skill } : undefined),
    configuration: undefined,
    metadata: undefined,
  };
}

function text(t: string): Part {
  return { content: { $case: "text", value: t }, metadata: undefined, filename: "", mediaType: "text/plain" };
}

/** How the SDK test agent behaves per message text. */
export type SdkAgentMode = "echo" | "drop" | "slow";

/** An agent built with the SDK's own server pieces (Express), listening on 127.0.0.1. */
export interface SdkAgent {
  url: string;
  /** Requests whose `authorization` header was seen, in order. */
  seenAuth: string[];
  /** Closes the server and its connections. */
  close(): Promise<void>;
}

/**
 * Starts an SDK agent: "echo" answers `echo: <text>` as an artifact after a working update;
 * "drop" publishes working and then closes every connection (a server dropping mid-stream);
 * "slow" stays working until cancelled. `streaming` is what its card says.
 */
export async function startSdkAgent(opts: { streaming?: boolean; card?: unknown } = {}): Promise<SdkAgent> {
  const app = express();
  // Set once listening; the executor's "drop" mode reaches it through the box.
  const box: { server?: Server } = {};
  const seenAuth: string[] = [];
  // A "slow" task's execute stays pending until it is cancelled (the SDK ends a task's stream
  // when execute returns).
  const waiting = new Map<string, { bus: ExecutionEventBus; done: () => void }>();
  const executor: AgentExecutor = {
    execute(ctx: RequestContext, bus: ExecutionEventBus) {
      const { taskId, contextId } = ctx;
      const said = ctx.userMessage.parts.map((p) => p.content?.$case === "text" ? p.content.value : "").join(
        "",
      );
      const status = (state: TaskState, t?: string) =>
        bus.publish(AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: {
            state,
            message: t === undefined ? undefined : {
              messageId: crypto.randomUUID(),
              contextId,
              taskId,
              role: Role.ROLE_AGENT,
              parts: [text(t)],
              metadata: undefined,
              extensions: [],
              referenceTaskIds: [],
            },
            timestamp: new Date().toISOString(),
          },
          metadata: undefined,
        }));
      bus.publish(AgentEvent.task({
        id: taskId,
        contextId,
        status: {
          state: TaskState.TASK_STATE_SUBMITTED,
          message: undefined,
          timestamp: new Date().toISOString(),
        },
        artifacts: [],
        history: [ctx.userMessage],
        metadata: undefined,
      }));
      status(TaskState.TASK_STATE_WORKING, "thinking");
      if (said.startsWith("drop")) {
        // The task stays working (execute never returns) and every socket is closed under the
        // open stream: the client sees the connection end mid-stream.
        setTimeout(() => box.server?.closeAllConnections(), 0);
        return new Promise<void>(() => {});
      }
      if (said.startsWith("slow")) {
        const done = Promise.withResolvers<void>();
        waiting.set(taskId, { bus, done: done.resolve });
        return done.promise;
      }
      bus.publish(AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: "answer",
          name: "answer",
          description: "",
          parts: [text(`echo: ${said}`)],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }));
      status(TaskState.TASK_STATE_COMPLETED);
      bus.finished();
      return Promise.resolve();
    },
    cancelTask(taskId: string, bus: ExecutionEventBus) {
      const w = waiting.get(taskId);
      waiting.delete(taskId);
      const b = w?.bus ?? bus;
      b.publish(AgentEvent.statusUpdate({
        taskId,
        contextId: "",
        status: {
          state: TaskState.TASK_STATE_CANCELED,
          message: undefined,
          timestamp: new Date().toISOString(),
        },
        metadata: undefined,
      }));
      b.finished();
      w?.done();
      return Promise.resolve();
    },
  };
  const card: AgentCard = {
    name: "sdk-echo",
    description: "Echoes what it is told.",
    version: "1.0.0",
    supportedInterfaces: [],
    provider: undefined,
    documentationUrl: undefined,
    iconUrl: undefined,
    capabilities: {
      streaming: opts.streaming ?? true,
      pushNotifications: false,
      extensions: [],
      extendedAgentCard: false,
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{
      id: "echo",
      name: "echo",
      description: "Repeats the message, prefixed with 'echo: '.",
      tags: ["test"],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    }],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use((req: { header(n: string): string | undefined }, _res: unknown, next: () => void) => {
    seenAuth.push(req.header("authorization") ?? "");
    next();
  });
  if (opts.card !== undefined) {
    app.get(
      "/.well-known/agent-card.json",
      (_req: unknown, res: { type(t: string): { send(b: string): void } }) => {
        res.type("application/json").send(
          typeof opts.card === "string" ? opts.card : JSON.stringify(opts.card),
        );
      },
    );
  } else {
    app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }));
  }
  app.use("/jsonrpc", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  app.use("/rest", restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  const listening = Promise.withResolvers<void>();
  const server: Server = box.server = app.listen(0, "127.0.0.1", () => listening.resolve());
  await listening.promise;
  const port = (server.address() as { port: number }).port;
  const url = `http://127.0.0.1:${port}`;
  card.supportedInterfaces = [
    { url: `${url}/jsonrpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "" },
    { url: `${url}/rest`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0", tenant: "" },
  ];
  return {
    url,
    seenAuth,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
