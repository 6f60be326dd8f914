// A hostile mesh peer for the CLI tests: a process with its own (wrong) key that sends `victim`
// requests claiming to come from `claimed`, signed with its own key. Prints one line per attempt:
// "dropped" when the victim never answered (the request timed out), "ANSWERED" if it did.
// Usage: deno run -A forger.ts NATS_URL VICTIM_AGENT_ID CLAIMED_AGENT_ID
import { connect, headers } from "@nats-io/transport-node";
import { MeshIdentity } from "../../src/clients/mesh/identity.ts";
import { SIGNATURE_HEADER, subjectOf } from "../../src/clients/mesh/nats_transport.ts";

const [url, victim, claimed] = Deno.args;
const wrong = MeshIdentity.random();
const nc = await connect({ servers: url.replace("nats://", "") });
for (const type of ["request", "send"]) {
  const body = new TextEncoder().encode(
    `{"v":1,"id":"${crypto.randomUUID()}","from":"${claimed}","to":"${victim}","type":"${type}",` +
      `"ts":${Date.now()},"payload":{"forged":true}}`,
  );
  const h = headers();
  h.set(SIGNATURE_HEADER, wrong.signText(body));
  for (;;) {
    try {
      await nc.request(subjectOf(victim), body, { headers: h, timeout: 1500 });
      console.log("ANSWERED");
      break;
    } catch (e) {
      const err = e as Error & { isNoResponders?: () => boolean };
      if (err.isNoResponders?.()) { // the victim is not subscribed yet
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      console.log("dropped");
      break;
    }
  }
}
await nc.close();
