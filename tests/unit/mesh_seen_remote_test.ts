// The replay memory kept by another process (src/clients/mesh/seen_remote.ts), as the sandbox
// launcher serves it to the confined runtime: adds answered in order (new, then replay), one client
// only (a second connection, with the token or not, is refused and adds nothing), a client without
// the token is never served, and a client whose server is gone fails every add (fail closed).
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileSeenIds, MemorySeenIds } from "../../src/clients/mesh/seen_ids.ts";
import { connectSeenIds, SeenServiceGone, serveSeenIds } from "../../src/clients/mesh/seen_remote.ts";
import { pathExists, tempDir } from "../helpers.ts";

const ID = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;

/** Lines a raw connection to `socket` gets back after sending `text` (until the server closes it). */
async function rawExchange(socket: string, text: string): Promise<string | Error> {
  let conn: Deno.UnixConn;
  try {
    conn = await Deno.connect({ transport: "unix", path: socket });
  } catch (e) {
    return e as Error;
  }
  try {
    await conn.write(new TextEncoder().encode(text));
    await conn.closeWrite();
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
    }
    return new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
  } finally {
    conn.close();
  }
}

Deno.test("mesh seen remote: the launcher's memory answers new, then replay, across its file's openers", async () => {
  const file = join(await tempDir("ab_seen_remote_"), "seen.sqlite");
  const store = new FileSeenIds(file);
  const service = serveSeenIds(store);
  try {
    const seen = await connectSeenIds(service.socket, service.token);
    await service.accepted;
    const now = Date.now();
    // several in flight at once: each answer goes to its own add
    const answers = await Promise.all([
      seen.add(ID(1), now, now),
      seen.add(ID(2), now, now),
      seen.add(ID(1), now, now),
    ]);
    assert.deepEqual(answers, [true, true, false]);
    assert.equal(await seen.add(ID(2), now, now + 1), false);
    seen.close();
    await assert.rejects(() => seen.add(ID(3), now, now), SeenServiceGone, "a closed client fails its adds");
  } finally {
    service.close();
    store.close();
  }
  const again = new FileSeenIds(file); // an unconfined run of the project, later
  try {
    assert.equal(
      again.add(ID(1), Date.now(), Date.now()),
      false,
      "what the launcher remembered is in the file",
    );
  } finally {
    again.close();
  }
});

Deno.test("attack: mesh seen remote serves one client: later connections and tokenless ones add nothing", async () => {
  const store = new MemorySeenIds();
  const service = serveSeenIds(store);
  try {
    // before the runtime: a connection without the token is closed unanswered, and does not count
    const wrong = await rawExchange(service.socket, `not-the-token\n${ID(7)} 1 1\n`);
    assert.equal(wrong, "", "a tokenless connection got an answer");
    const seen = await connectSeenIds(service.socket, service.token); // the runtime
    await service.accepted;
    const now = Date.now();
    assert.equal(await seen.add(ID(1), now, now), true);
    // a child that read the token: the socket is gone, and nothing it sends is added
    assert.ok(!pathExists(service.socket), "the socket outlived its one client");
    const flood = await rawExchange(service.socket, `${service.token}\n${ID(2)} ${now} ${now}\n`);
    assert.ok(flood instanceof Error, `a second client was served: ${String(flood)}`);
    assert.equal(store.add(ID(2), now, now), true, "the flood's id was not added");
    assert.equal(store.add(ID(7), now, now), true, "the tokenless connection's id was not added");
    seen.close();
  } finally {
    service.close();
  }
});

Deno.test("attack: mesh seen remote fails closed when the launcher is gone", async () => {
  const store = new MemorySeenIds();
  const service = serveSeenIds(store);
  const seen = await connectSeenIds(service.socket, service.token);
  await service.accepted;
  const now = Date.now();
  assert.equal(await seen.add(ID(1), now, now), true);
  service.close(); // the launcher ended
  await assert.rejects(() => seen.add(ID(2), now, now), SeenServiceGone);
  await assert.rejects(() => seen.add(ID(3), now, now), SeenServiceGone, "every later add fails too");
  seen.close();
  // a socket that cannot be reached at all: a memory that refuses every message
  const never = await connectSeenIds(join(await tempDir("ab_seen_gone_"), "none.sock"), "x");
  await assert.rejects(() => never.add(ID(4), now, now), SeenServiceGone);
  never.close();
});
