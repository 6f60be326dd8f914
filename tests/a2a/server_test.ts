/**
 * `agent-block a2a serve` called by the A2A SDK's own client, over both bindings: the card's
 * skills are the blocks, a message runs its block (send and stream), a task can be fetched and
 * cancelled (the run's process tree ends), a failing block fails the task; the guard refuses a
 * bad token and a forged Host before anything runs.
 */
import { join } from "node:path";
import { TaskState } from "@a2a-js/sdk";
import { processAlive, resultOf, runCli, runLua, tempDir, waitFor } from "../helpers.ts";
import {
  assert,
  assertEquals,
  assertStringIncludes,
  rawHttp,
  readPid,
  waitForFile,
} from "../mcp_server/mcp_helpers.ts";
import { a2aProject, sdkClient, sendRequest, startA2aServer } from "./a2a_helpers.ts";

const BINDINGS = ["JSONRPC", "HTTP+JSON"] as const;

function artifactText(
  task: { artifacts: { name: string; parts: { content?: { $case: string; value: unknown } }[] }[] },
  name: string,
) {
  const a = task.artifacts.find((x) => x.name === name);
  return a?.parts.map((p) => p.content?.$case === "text" ? p.content.value : "").join("");
}

Deno.test("a2a serve: the SDK client reads the card, sends, streams, gets and cancels over both bindings", async (t) => {
  const { root, home } = await a2aProject();
  const server = await startA2aServer(root, home);
  try {
    await t.step("the card lists the blocks as skills, with both bindings", async () => {
      const card = await (await fetch(`${server.url}/.well-known/agent-card.json`)).json();
      assertEquals(card.skills.map((s: { id: string }) => s.id).sort(), [
        "busy",
        "context",
        "fails",
        "notes",
        "shout",
        "steps",
      ]);
      assertEquals(
        card.skills.find((s: { id: string }) => s.id === "shout").description,
        "Shouts the prompt back.",
      );
      assertEquals(card.supportedInterfaces.map((i: { protocolBinding: string }) => i.protocolBinding), [
        "JSONRPC",
        "HTTP+JSON",
      ]);
    });
    for (const binding of BINDINGS) {
      await t.step(
        `${binding}: send runs the named block and returns its value as the result artifact`,
        async () => {
          const client = await sdkClient(server.url, binding);
          assertEquals(client.transport.protocolName, binding);
          const r = await client.sendMessage(sendRequest("hello", "shout"));
          assert("id" in r, `a task, got ${JSON.stringify(r)}`);
          assertEquals(r.status?.state, TaskState.TASK_STATE_COMPLETED);
          assertEquals(artifactText(r, "result"), "echo: HELLO");
          const again = await client.getTask({ tenant: "", id: r.id });
          assertEquals(again.status?.state, TaskState.TASK_STATE_COMPLETED);
          assertEquals(artifactText(again, "result"), "echo: HELLO");
        },
      );
      await t.step(
        `${binding}: stream carries working updates, the staged artifact and the end`,
        async () => {
          const client = await sdkClient(server.url, binding);
          const kinds: string[] = [];
          const artifacts: string[] = [];
          let last: TaskState | undefined;
          for await (const ev of client.sendMessageStream(sendRequest("x", "steps"))) {
            const p = ev.payload!;
            kinds.push(p.$case);
            if (p.$case === "statusUpdate") last = p.value.status?.state;
            if (p.$case === "artifactUpdate") artifacts.push(p.value.artifact!.name);
          }
          assertEquals(kinds[0], "task");
          assert(kinds.includes("statusUpdate"));
          assertEquals(artifacts, ["note", "result"]);
          assertEquals(last, TaskState.TASK_STATE_COMPLETED);
        },
      );
      await t.step(`${binding}: the run's kernel events stream as working updates`, async () => {
        const client = await sdkClient(server.url, binding);
        const kinds: string[] = [];
        const texts: string[] = [];
        for await (const ev of client.sendMessageStream(sendRequest("", "notes"))) {
          const p = ev.payload!;
          if (p.$case !== "statusUpdate" || p.value.status?.state !== TaskState.TASK_STATE_WORKING) continue;
          for (const part of p.value.status.message?.parts ?? []) {
            const c = part.content;
            if (c?.$case === "text") texts.push(c.value);
            if (c?.$case === "data" && c.value?.type === "events") {
              for (const r of c.value.rows) kinds.push(r.kind);
            }
            if (c?.$case === "data" && c.value?.type === "session_open") kinds.push("(session_open)");
          }
        }
        assertEquals(kinds.filter((k) => k === "note").length, 1, kinds.join(","));
        assert(kinds.includes("(session_open)"), kinds.join(","));
        assert(texts.some((t) => t.startsWith("block 'notes': kernel: ")), texts.join(" | "));
      });
      await t.step(`${binding}: a block that raises fails the task with its error`, async () => {
        const client = await sdkClient(server.url, binding);
        const r = await client.sendMessage(sendRequest("", "fails"));
        assert("id" in r);
        assertEquals(r.status?.state, TaskState.TASK_STATE_FAILED);
        const msg = r.status?.message?.parts.map((p) => p.content?.$case === "text" ? p.content.value : "")
          .join("");
        assertStringIncludes(msg ?? "", "broken on purpose");
      });
      await t.step(
        `${binding}: with several blocks and no skill named, the task is rejected naming them`,
        async () => {
          const client = await sdkClient(server.url, binding);
          const r = await client.sendMessage(sendRequest("hi"));
          assert("id" in r);
          assertEquals(r.status?.state, TaskState.TASK_STATE_REJECTED);
          const msg = r.status?.message?.parts.map((p) => p.content?.$case === "text" ? p.content.value : "")
            .join("");
          assertStringIncludes(msg ?? "", "skills: ");
        },
      );
      await t.step(`${binding}: cancel ends the run's process tree and the task is canceled`, async () => {
        const client = await sdkClient(server.url, binding);
        const dir = await tempDir("ab_a2a_busy_");
        const stream = client.sendMessageStream(sendRequest(dir, "busy"))[Symbol.asyncIterator]();
        const first = await stream.next();
        assert(!first.done && first.value.payload?.$case === "task");
        const taskId = first.value.payload.value.id;
        await waitForFile(join(dir, "sleeper.pid"), "the block's sleeper");
        const sleeper = readPid(join(dir, "sleeper.pid"));
        const cancelled = await client.cancelTask({ tenant: "", id: taskId, metadata: undefined });
        assertEquals(cancelled.status?.state, TaskState.TASK_STATE_CANCELED);
        await waitFor(() => !processAlive(sleeper), { what: "the sleeper to be ended" });
        // The stream ends with the canceled state.
        let state: TaskState | undefined;
        while (true) {
          const r = await stream.next();
          if (r.done) break;
          if (r.value.payload?.$case === "statusUpdate") state = r.value.payload.value.status?.state;
        }
        assertEquals(state, TaskState.TASK_STATE_CANCELED);
        const got = await client.getTask({ tenant: "", id: taskId });
        assertEquals(got.status?.state, TaskState.TASK_STATE_CANCELED);
      });
      await t.step(`${binding}: our own a2a.send drives it too, seeing the run's updates`, async () => {
        const r = resultOf(
          await runLua(`
          local seen = {}
          local r = a2a.send(${JSON.stringify(server.url)}, "go", { skill = "steps", binding = "${binding}",
            on_update = function(ev) seen[#seen + 1] = ev.kind .. ":" .. (ev.name or ev.state or "") end })
          return std.json.encode({ state = r.state, text = r.text, seen = seen })
        `),
        );
        assertEquals(r.state, "completed");
        assertEquals(r.text, "half way\ndone");
        assert(r.seen.includes("artifact:note") && r.seen.includes("artifact:result"), r.seen.join(","));
        assertEquals(r.seen.at(-1), "status:completed");
        // A data part is _CONTEXT; with no text part there is no _PROMPT.
        const c = resultOf(
          await runLua(`
          local r = a2a.send(${
            JSON.stringify(server.url)
          }, { parts = { { data = { a = 1 } } }, skill = "context" },
            { binding = "${binding}" })
          return r.text
        `),
        );
        assertEquals(c, { prompt: "none", context: '{"a":1}' });
      });
      await t.step(`${binding}: an unknown task is TASK_NOT_FOUND`, async () => {
        const client = await sdkClient(server.url, binding);
        let err: unknown;
        try {
          await client.getTask({ tenant: "", id: "no-such-task" });
        } catch (e) {
          err = e;
        }
        assertEquals((err as { reason?: string })?.reason, "TASK_NOT_FOUND");
      });
    }
  } finally {
    await server.stop();
  }
});

Deno.test("attack: a2a serve refuses a missing or wrong bearer token, a forged Host or Origin and an oversized body, and runs nothing", async () => {
  const { root, home } = await a2aProject();
  const tokenFile = join(root, ".token");
  Deno.writeTextFileSync(tokenFile, "s3cret-token\n");
  const marker = join(root, "ran");
  Deno.writeTextFileSync(
    join(root, "blocks", "mark.lua"),
    `-- Marks.\nio.open(${JSON.stringify(marker)}, "w"):close()\nreturn "x"\n`,
  );
  const server = await startA2aServer(root, home, ["--token-file", tokenFile]);
  try {
    for (const binding of BINDINGS) {
      // No token: the card itself is refused, so the SDK client cannot even start.
      let err: unknown;
      try {
        await sdkClient(server.url, binding);
      } catch (e) {
        err = e;
      }
      assertStringIncludes(String((err as Error)?.message), "401");
      // The right token for the card, a wrong one for the call.
      const auth = { authorization: "Bearer s3cret-token" };
      const good = await sdkClient(server.url, binding, auth);
      const r = await good.sendMessage(sendRequest("a", "shout"));
      assert("id" in r && r.status?.state === TaskState.TASK_STATE_COMPLETED);
      err = undefined;
      auth.authorization = "Bearer nope";
      try {
        await good.sendMessage(sendRequest("x", "mark"));
      } catch (e) {
        err = e;
      }
      assert(err !== undefined, "a wrong token must be refused");
      assertStringIncludes(String((err as Error).message), "Unauthorized");
    }
    // Our own client: the headers reach the card and every call; without them the card is refused.
    const ours = resultOf(
      await runLua(`
      local url = ${JSON.stringify(server.url)}
      local with = a2a.send(url, "a", { skill = "shout", headers = { authorization = "Bearer s3cret-token" } })
      local without = a2a.send(url, "a", { skill = "shout" })
      return std.json.encode({ with = with.text, without = without })
    `),
    );
    assertEquals(ours.with, "echo: A");
    assertEquals(ours.without.ok, false);
    assertEquals(ours.without.kind, "card");
    assertStringIncludes(ours.without.error, "HTTP 401");
    assert(!ours.without.error.includes("s3cret"), "the token is never in an error");
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: {
        message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }], metadata: { skill: "mark" } },
      },
    });
    const forged = await rawHttp(`${server.url}/a2a/jsonrpc`, {
      Host: "evil.example:80",
      Authorization: "Bearer s3cret-token",
      "A2A-Version": "1.0",
    }, body);
    assertEquals(forged.status, 403);
    assertStringIncludes(forged.body, "evil.example");
    const badOrigin = await rawHttp(`${server.url}/a2a/jsonrpc`, {
      Host: new URL(server.url).host,
      Origin: "http://evil.example",
      Authorization: "Bearer s3cret-token",
    }, body);
    assertEquals(badOrigin.status, 403);
    const noToken = await rawHttp(`${server.url}/a2a/jsonrpc`, { Host: new URL(server.url).host }, body);
    assertEquals(noToken.status, 401);
    // A body declared past the 16 MiB limit is refused unread.
    const huge = await rawHttp(`${server.url}/a2a/rest/message:send`, {
      Host: new URL(server.url).host,
      Authorization: "Bearer s3cret-token",
      "Content-Length": String(17 * 1024 * 1024),
    }, body);
    assertEquals(huge.status, 413);
    let exists = true;
    try {
      Deno.statSync(marker);
    } catch {
      exists = false;
    }
    assertEquals(exists, false, "a refused request must not run the block");
  } finally {
    await server.stop();
  }
});

Deno.test("a2a serve: bad command lines exit 2 naming the flag, before listening", async () => {
  const { root } = await a2aProject();
  const nonLoopback = await runCli(["a2a", "serve", "-p", root, "--bind", "0.0.0.0:0"]);
  assertEquals(nonLoopback.code, 2);
  assertStringIncludes(nonLoopback.stderr, "--bind: refusing to listen on '0.0.0.0'");
  const badTimeout = await runCli(["a2a", "serve", "-p", root, "--run-timeout", "soon"]);
  assertEquals(badTimeout.code, 2);
  assertStringIncludes(badTimeout.stderr, "--run-timeout must be a positive number");
  const unknown = await runCli(["a2a", "listen"]);
  assertEquals(unknown.code, 2);
  assertStringIncludes(unknown.stderr, "a2a: unknown subcommand 'listen'");
  const help = await runCli(["a2a", "serve", "--help"]);
  assertEquals(help.code, 0);
  assertStringIncludes(help.stdout, "agent-block a2a serve [-p DIR]");
});
