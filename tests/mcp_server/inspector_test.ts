/**
 * `agent-block mcp` driven by the official MCP Inspector CLI (`@modelcontextprotocol/inspector`
 * 2.12.0, `--cli` mode) — a client we did not write — over stdio in both protocol eras and over
 * Streamable HTTP with a bearer token.
 *
 * The Inspector is not a dependency of the project: it is installed at test time with npm into
 * a cache directory under the system temp dir (reused by later runs). When npm or node is
 * missing, or the install fails (no registry), these tests are IGNORED and a message says why.
 */
import { join } from "node:path";
import { CLI, REPO_ROOT } from "../helpers.ts";
import {
  assert,
  assertEquals,
  assertStringIncludes,
  DENO_CONFIG,
  freshProject,
  startHttpServer,
} from "./mcp_helpers.ts";

const INSPECTOR_VERSION = "2.12.0";

async function run(cmd: string, args: string[], env?: Record<string, string>, cwd?: string) {
  const out = await new Deno.Command(cmd, { args, env, cwd, stdin: "null", stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** The Inspector's entry script, installing it on first use; a string saying why not otherwise. */
async function ensureInspector(): Promise<{ bin: string } | { skip: string }> {
  const tmp = Deno.env.get("TMPDIR") ?? "/tmp";
  const dir = join(tmp, `agent-block-test-inspector-${INSPECTOR_VERSION}`);
  const bin = join(dir, "node_modules", "@modelcontextprotocol", "inspector", "package.json");
  const entry = () => {
    const pkg = JSON.parse(Deno.readTextFileSync(bin)) as { bin?: Record<string, string> | string };
    const rel = typeof pkg.bin === "string"
      ? pkg.bin
      : pkg.bin?.["mcp-inspector"] ?? Object.values(pkg.bin ?? {})[0];
    return join(dir, "node_modules", "@modelcontextprotocol", "inspector", rel!);
  };
  try {
    Deno.statSync(bin);
    return { bin: entry() };
  } catch { /* not installed yet */ }
  for (const tool of ["node", "npm"]) {
    try {
      await run(tool, ["--version"]);
    } catch {
      return { skip: `'${tool}' is not on PATH` };
    }
  }
  const staging = await Deno.makeTempDir({ prefix: "ab_inspector_install_" });
  const r = await run("npm", [
    "install",
    "--prefix",
    staging,
    `@modelcontextprotocol/inspector@${INSPECTOR_VERSION}`,
    "--no-audit",
    "--no-fund",
    "--loglevel=error",
  ]);
  if (r.code !== 0) {
    return {
      skip: `npm install @modelcontextprotocol/inspector@${INSPECTOR_VERSION} failed:\n${
        r.stderr.slice(-2000)
      }`,
    };
  }
  try {
    Deno.renameSync(staging, dir);
  } catch {
    // Another run installed it meanwhile: use theirs.
  }
  return { bin: entry() };
}

const found = await ensureInspector();
if ("skip" in found) {
  console.warn(`SKIPPING the MCP Inspector tests: ${found.skip}`);
}
const ignore = "skip" in found;
const denoDir =
  (JSON.parse((await run(Deno.execPath(), ["info", "--json"])).stdout) as { denoDir: string }).denoDir;
const opts = { ignore, sanitizeOps: false, sanitizeResources: false };

/** Runs the Inspector CLI; returns its parsed `--format json` output and exit code. */
async function inspector(
  args: string[],
  target: string[],
  home: string,
): Promise<{ code: number; json: Record<string, unknown>; stderr: string }> {
  if ("skip" in found) throw new Error("unreachable");
  const r = await run(
    "node",
    [found.bin, "--cli", "--format", "json", ...args, "--", ...target],
    { ...Deno.env.toObject(), HOME: home, NO_COLOR: "1" },
  );
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    throw new Error(`Inspector printed no JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
  return { code: r.code, json, stderr: r.stderr };
}

/** The stdio server command as the Inspector starts it (its environment named with -e). */
function stdioTarget(root: string, agentHome: string): { env: string[]; target: string[] } {
  return {
    env: ["-e", `DENO_DIR=${denoDir}`, "-e", `AGENT_BLOCK_HOME=${agentHome}`],
    target: [Deno.execPath(), "run", "-A", "--quiet", "--config", DENO_CONFIG, CLI, "mcp", "-p", root],
  };
}

function text(json: Record<string, unknown>): string {
  const r = (json.result ?? json) as { content?: { text?: string }[] };
  return r.content?.[0]?.text ?? "";
}

for (const era of ["legacy", "modern"] as const) {
  Deno.test({
    name: `inspector --cli over stdio (${era} era): tools/list, tools/call, resources`,
    ...opts,
    fn: async () => {
      const p = await freshProject();
      const home = join(p.scratch, "inspector_home");
      Deno.mkdirSync(home);
      const { env, target } = stdioTarget(p.root, p.home);
      const base = [...env, "--protocol-era", era, "--cwd", REPO_ROOT];

      const list = await inspector([...base, "--method", "tools/list"], target, home);
      assertEquals(list.code, 0, list.stderr);
      const tools = ((list.json.result ?? list.json) as {
        tools: { name: string; inputSchema: { properties: { block: { enum: string[] } } } }[];
      }).tools;
      assertEquals(tools.map((t) => t.name), ["run_block", "run_flow"]);
      assert(tools[0].inputSchema.properties.block.enum.includes("echo"));
      assert(tools[0].inputSchema.properties.block.enum.includes("where"));

      const call = await inspector(
        [
          ...base,
          "--method",
          "tools/call",
          "--tool-name",
          "run_block",
          "--tool-arg",
          "block=echo",
          "prompt=from-inspector",
        ],
        target,
        home,
      );
      assertEquals(call.code, 0, call.stderr);
      assertEquals(JSON.parse(text(call.json)), { prompt: "from-inspector", context: null });
      // Only 2026-07-28 results carry the server's identity in _meta: proof of the era spoken.
      const meta = ((call.json.result ?? call.json) as { _meta?: Record<string, unknown> })._meta;
      assertEquals(meta?.["io.modelcontextprotocol/serverInfo"] !== undefined, era === "modern");

      const raised = await inspector(
        [...base, "--method", "tools/call", "--tool-name", "run_block", "--tool-arg", "block=raises"],
        target,
        home,
      );
      assert(raised.code !== 0, "a failed tool call is not a success for the Inspector");
      assertEquals(((raised.json.result ?? raised.json) as { isError?: boolean }).isError, true);
      assertStringIncludes(text(raised.json), "raises.lua refused: no prompt");

      const resources = await inspector([...base, "--method", "resources/list"], target, home);
      const uris = ((resources.json.result ?? resources.json) as { resources: { uri: string }[] }).resources
        .map((r) => r.uri);
      for (const u of ["agent-block://guide", "agent-block://blocks", "agent-block://blocks/echo"]) {
        assert(uris.includes(u), `${u} not in ${uris}`);
      }
      // The three reads at once: each is its own Inspector and server, and nothing they read changes.
      await Promise.all(
        [
          ["agent-block://guide", "return a JSON string"],
          ["agent-block://blocks", '"tier": "project-local"'],
          ["agent-block://blocks/echo", "std.json.encode"],
        ].map(async ([uri, part]) => {
          const r = await inspector([...base, "--method", "resources/read", "--uri", uri], target, home);
          assertEquals(r.code, 0, `${uri}: ${r.stderr}`);
          const contents = ((r.json.result ?? r.json) as { contents: { text: string }[] }).contents;
          assertStringIncludes(contents[0].text, part);
        }),
      );
    },
  });
}

Deno.test({
  name: "inspector --cli over HTTP with a bearer token: a block dropped in is callable without a restart",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    const home = join(p.scratch, "inspector_home");
    Deno.mkdirSync(home);
    const tokenFile = join(p.scratch, "token");
    Deno.writeTextFileSync(tokenFile, "insp-token\n");
    const srv = await startHttpServer(p.root, p.home, ["--token-file", tokenFile]);
    try {
      const hdr = ["--header", "Authorization: Bearer insp-token"];
      const httpRun = async (args: string[]) => {
        if ("skip" in found) throw new Error("unreachable");
        const r = await run("node", [found.bin, "--cli", "--format", "json", ...args, srv.url], {
          ...Deno.env.toObject(),
          HOME: home,
          NO_COLOR: "1",
        });
        return { code: r.code, stdout: r.stdout, stderr: r.stderr };
      };
      const denied = await httpRun(["--method", "tools/list"]);
      assert(denied.code !== 0, `no token must be refused:\n${denied.stdout}`);

      Deno.writeTextFileSync(
        join(p.root, "blocks", "dropped.lua"),
        '-- Dropped in.\nreturn "dropped " .. _PROMPT\n',
      );
      const list = await httpRun([...hdr, "--method", "tools/list"]);
      assertEquals(list.code, 0, list.stderr);
      assertStringIncludes(list.stdout, '"dropped"');
      const call = await httpRun([
        ...hdr,
        "--method",
        "tools/call",
        "--tool-name",
        "run_block",
        "--tool-arg",
        "block=dropped",
        "prompt=in",
        "--protocol-era",
        "auto",
      ]);
      assertEquals(call.code, 0, call.stderr + call.stdout);
      assertEquals(text(JSON.parse(call.stdout)), "dropped in");
    } finally {
      await srv.stop();
    }
  },
});
