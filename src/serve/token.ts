/**
 * The manager's bearer token: `~/.agent-block/serve.token`.
 *
 * Owns minting (`mintTokenIfAbsent`) and reading it. On first start the file does not exist: 32 bytes (256 bits) from
 * the OS CSPRNG (`crypto.getRandomValues`), written as 64 hex digits and a newline to a file
 * created exclusively with mode 0600 (two managers starting at once cannot both mint: the
 * second reads the first's). Later starts read it. The token is never logged.
 *
 * Invariants: an empty or unreadable token file is an error naming the file (a manager never
 * serves without a token); a token file readable by group or others is an error too, since
 * anyone who can read it can run every job.
 */
import { dirname } from "node:path";
import { AgentBlockError } from "../errors.ts";

/**
 * Mints the token file at `path` when it does not exist; true when this call made it. Also called
 * before a sandboxed run starts (`src/cli/sandbox_launch.ts`), so the token is there to be kept
 * read-only and a confined run cannot plant one of its own.
 */
export function mintTokenIfAbsent(path: string): boolean {
  try {
    Deno.mkdirSync(dirname(path), { recursive: true });
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
    Deno.writeTextFileSync(path, hex + "\n", { createNew: true, mode: 0o600 });
    return true;
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) {
      throw new AgentBlockError(`serve: cannot create the token file ${path}: ${(e as Error).message}`);
    }
    return false;
  }
}

/** Reads the token at `path`, minting it first when the file does not exist. */
export function loadOrMintToken(path: string): { token: string; minted: boolean } {
  const minted = mintTokenIfAbsent(path);
  let text: string;
  try {
    if (Deno.build.os !== "windows") {
      const mode = Deno.statSync(path).mode ?? 0;
      if (mode & 0o077) {
        throw new AgentBlockError(
          `serve: the token file ${path} is readable by others (mode ${(mode & 0o777).toString(8)}); ` +
            `chmod 600 it`,
        );
      }
    }
    text = Deno.readTextFileSync(path).trim();
  } catch (e) {
    if (e instanceof AgentBlockError) throw e;
    throw new AgentBlockError(`serve: cannot read the token file ${path}: ${(e as Error).message}`);
  }
  if (text === "") throw new AgentBlockError(`serve: the token file ${path} is empty`);
  return { token: text, minted };
}
