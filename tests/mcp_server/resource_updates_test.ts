/**
 * `resources/subscribe` on declared resources (`src/mcp_server/subscriptions.ts`): a real
 * `agent-block mcp --expose blocks` process and the v2 SDK client, over stdio and over Streamable
 * HTTP (a 2025-era session). A subscribed resource's client is sent
 * `notifications/resources/updated` when a path its header watches (`---@watch`) or the block's
 * own file changes; not after `resources/unsubscribe`; and the watches end with the connection.
 * In the 2026-07-28 era (over stdio and over HTTP) the subscriptions are `subscriptions/listen`
 * streams' (over stdio the SDK's entry answers them, `src/mcp_server/stdio.ts` reads them off the
 * wire).
 * Every wait is for an event (the notification, a log line), never a sleep.
 */
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { tempProject, waitFor } from "../helpers.ts";
import { assert, assertEquals, connectStdio, startHttpServer } from "./mcp_helpers.ts";
import { resourcePaths } from "../../src/mcp_server/server.ts";
import { scanBlocks } from "../../src/blocks/registry.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

const BLOCKS: Record<string, string> = {
  "blocks/note.lua": `--- One note, from notes/<id>.txt.
---@resource note://{id} note
---@watch notes/{id}.txt
return "note " .. _ARGS.id
`,
  "blocks/status.lua": `--- What is in state/.
---@resource status://now status
---@watch state
return "status"
`,
  "notes/.keep": "",
  "state/.keep": "",
};

async function project(): Promise<{ root: string; home: string }> {
  const root = await tempProject(BLOCKS, "ab_mcp_subscribe_");
  const home = join(root, ".home");
  Deno.mkdirSync(join(home, "blocks"), { recursive: true });
  return { root, home };
}

/** Collects `notifications/resources/updated` URIs and lets a test wait for the next one of a URI. */
function updates(client: Client): { seen: string[]; next: (uri: string) => Promise<void> } {
  const seen: string[] = [];
  const waiting: { uri: string; after: number; resolve: () => void }[] = [];
  client.setNotificationHandler("notifications/resources/updated", (n) => {
    seen.push(n.params.uri);
    for (const w of [...waiting]) {
      if (w.uri === n.params.uri) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  return {
    seen,
    next: (uri) => new Promise<void>((resolve) => waiting.push({ uri, after: seen.length, resolve })),
  };
}

/** Waits for `p`, failing with `what` after 30 s (the server never sent it). */
async function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within 30 s`)), 30_000);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test({
  name:
    "mcp resources/subscribe over stdio (2025 era): a watched file, the block's own file and a watched directory notify; unsubscribe stops it",
  ...opts,
  fn: async () => {
    const p = await project();
    const s = await connectStdio(p.root, p.home, { extraArgs: ["--expose", "blocks"] });
    try {
      assertEquals(s.client.getNegotiatedProtocolVersion(), "2025-11-25");
      const caps = s.client.getServerCapabilities();
      assertEquals(caps?.resources?.subscribe, true);
      const u = updates(s.client);
      await s.client.subscribeResource({ uri: "note://a" });
      await s.client.subscribeResource({ uri: "status://now" });

      // The watched file is created (it did not exist when the subscription began).
      let next = u.next("note://a");
      Deno.writeTextFileSync(join(p.root, "notes", "a.txt"), "first");
      await within(next, "update of note://a after notes/a.txt was created");

      // Written again, then replaced by a rename (an editor's atomic save).
      next = u.next("note://a");
      Deno.writeTextFileSync(join(p.root, "notes", "a.tmp"), "second");
      Deno.renameSync(join(p.root, "notes", "a.tmp"), join(p.root, "notes", "a.txt"));
      await within(next, "update of note://a after notes/a.txt was replaced");

      // The block's own file.
      next = u.next("note://a");
      Deno.writeTextFileSync(
        join(p.root, "blocks", "note.lua"),
        Deno.readTextFileSync(join(p.root, "blocks", "note.lua")) + "-- edited\n",
      );
      await within(next, "update of note://a after its block was edited");

      // Anything under a watched directory.
      next = u.next("status://now");
      Deno.mkdirSync(join(p.root, "state", "deep"));
      Deno.writeTextFileSync(join(p.root, "state", "deep", "x"), "x");
      await within(next, "update of status://now after state/deep/x was written");

      // After unsubscribe, a change of note://a's file sends nothing: the later change of state/
      // (written after it) is notified, and note://a is not.
      await s.client.unsubscribeResource({ uri: "note://a" });
      const before = u.seen.filter((x) => x === "note://a").length;
      Deno.writeTextFileSync(join(p.root, "notes", "a.txt"), "third");
      next = u.next("status://now");
      Deno.writeTextFileSync(join(p.root, "state", "y"), "y");
      await within(next, "update of status://now after state/y was written");
      assertEquals(u.seen.filter((x) => x === "note://a").length, before);
      // Other notes were never subscribed to.
      assert(!u.seen.includes("note://b"), `unexpected: ${u.seen}`);
    } finally {
      await s.close();
    }
  },
});

Deno.test({
  name:
    "mcp subscriptions/listen over stdio (2026-07-28): listened resources are notified on change; a stream's close releases only what no other stream holds",
  ...opts,
  fn: async () => {
    const p = await project();
    const s = await connectStdio(p.root, p.home, { era: "auto", extraArgs: ["--expose", "blocks"] });
    try {
      assertEquals(s.client.getNegotiatedProtocolVersion(), "2026-07-28");
      const u = updates(s.client);
      const first = await s.client.listen({ resourceSubscriptions: ["note://e", "status://now"] });
      const second = await s.client.listen({ resourceSubscriptions: ["status://now"] });

      // A watched file created, then a file under a watched directory.
      let next = u.next("note://e");
      Deno.writeTextFileSync(join(p.root, "notes", "e.txt"), "e");
      await within(next, "update of note://e on the stdio listen stream");
      next = u.next("status://now");
      Deno.writeTextFileSync(join(p.root, "state", "w"), "w");
      await within(next, "update of status://now on the stdio listen streams");
      assert(!u.seen.includes("note://f"), `unexpected: ${u.seen}`);

      // The first stream closes: note://e is released, status://now is still held by the second.
      await first.close();
      await waitFor(() => s.stderr().includes("subscriptions/listen: note://e released"), {
        what: "note://e released when its only stream closed",
        timeoutMs: 30_000,
      });
      assert(!s.stderr().includes("subscriptions/listen: status://now released"), s.stderr());
      const before = u.seen.filter((x) => x === "note://e").length;
      Deno.writeTextFileSync(join(p.root, "notes", "e.txt"), "e again");
      next = u.next("status://now");
      Deno.writeTextFileSync(join(p.root, "state", "v"), "v");
      await within(next, "update of status://now on the stream still open");
      assertEquals(u.seen.filter((x) => x === "note://e").length, before);

      await second.close();
      await waitFor(() => s.stderr().includes("subscriptions/listen: status://now released"), {
        what: "status://now released when its last stream closed",
        timeoutMs: 30_000,
      });
    } finally {
      await s.close();
    }
  },
});

Deno.test({
  name:
    "mcp resources/subscribe over HTTP (2025-era session): notified on change; the watches end when the session closes",
  ...opts,
  fn: async () => {
    const p = await project();
    const srv = await startHttpServer(p.root, p.home, ["--expose", "blocks"]);
    try {
      const client = new Client({ name: "subscriber", version: "0" });
      const transport = new StreamableHTTPClientTransport(new URL(srv.url));
      await client.connect(transport);
      const u = updates(client);
      await client.subscribeResource({ uri: "note://b" });
      const next = u.next("note://b");
      Deno.writeTextFileSync(join(p.root, "notes", "b.txt"), "b");
      await within(next, "update of note://b over HTTP");
      // Ending the session (DELETE) closes the server instance, and with it the watches.
      await transport.terminateSession();
      await client.close();
      await waitFor(() => srv.stderr().includes("connection closed: 1 subscription(s) ended"), {
        what: "the subscriptions ended with the session",
        timeoutMs: 30_000,
      });
    } finally {
      await srv.stop();
    }
  },
});

Deno.test({
  name:
    "mcp subscriptions/listen over HTTP (2026-07-28): a listened resource is notified on change; closing the stream releases its watch",
  ...opts,
  fn: async () => {
    const p = await project();
    const srv = await startHttpServer(p.root, p.home, ["--expose", "blocks"]);
    try {
      const client = new Client({ name: "listener", version: "0" }, {
        versionNegotiation: { mode: "auto" as const },
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(srv.url)));
      try {
        assertEquals(client.getNegotiatedProtocolVersion(), "2026-07-28");
        const u = updates(client);
        const sub = await client.listen({ resourceSubscriptions: ["note://c", "status://now"] });
        let next = u.next("note://c");
        Deno.writeTextFileSync(join(p.root, "notes", "c.txt"), "c");
        await within(next, "update of note://c on the listen stream");
        next = u.next("status://now");
        Deno.writeTextFileSync(join(p.root, "state", "z"), "z");
        await within(next, "update of status://now on the listen stream");
        assert(!u.seen.includes("note://d"), `unexpected: ${u.seen}`);
        await sub.close();
        await waitFor(() => srv.stderr().includes("subscriptions/listen: note://c released"), {
          what: "the stream's watch released when it closed",
          timeoutMs: 30_000,
        });
      } finally {
        await client.close();
      }
    } finally {
      await srv.stop();
    }
  },
});

Deno.test("attack: a resource URI's variables cannot point a watch outside the project root", async () => {
  const root = await tempProject({
    "blocks/any.lua": `--- Anything.
---@resource any://{a}/{b} any
---@watch {a}/{b}
return "x"
`,
  }, "ab_mcp_watch_escape_");
  const blocks = scanBlocks([{ tier: "project", dir: join(root, "blocks") }]);
  // A plain pair stays inside, and is watched.
  assertEquals(resourcePaths({ projectRoot: root }, blocks, "any://x/y"), [
    join(root, "blocks", "any.lua"),
    join(root, "x", "y"),
  ]);
  // '..' as a variable would leave the root: only the block's own file is watched.
  assertEquals(resourcePaths({ projectRoot: root }, blocks, "any://../etc"), [
    join(root, "blocks", "any.lua"),
  ]);
  assertEquals(resourcePaths({ projectRoot: root }, blocks, "any://..%2F../etc"), [
    join(root, "blocks", "any.lua"),
  ]);
  // A URI no block backs has nothing to watch.
  assertEquals(resourcePaths({ projectRoot: root }, blocks, "other://x"), undefined);
});
