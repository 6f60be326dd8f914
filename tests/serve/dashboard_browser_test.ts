/**
 * The dashboard (`GET /`, issue 16 §2) at its boundary and in a real headless browser.
 *
 * Without a browser: `/` is served with no token but still behind the Host/Origin checks, with a
 * strict Content-Security-Policy, and holds no data and no token. In Debian's `chromium` driven
 * by `npm:playwright-core`: the page asks for the token, refuses a wrong one, lists the job once
 * the right one is entered (kept in session storage across a reload), "run now" creates a run
 * whose state turns `ok` in the page, its stderr tail shows, no request leaves the manager's
 * origin, no CSP violation is reported, and a screenshot is taken (a non-empty PNG). Skipped,
 * saying why, only when `/usr/bin/chromium` is absent (`.ci/run` installs it).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../helpers.ts";
import { jobProject, type Manager, rawRequest, startManager } from "./serve_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const CHROMIUM = "/usr/bin/chromium";

function chromiumMissing(): string | undefined {
  try {
    return Deno.statSync(CHROMIUM).isFile ? undefined : `${CHROMIUM} is not a file`;
  } catch {
    return `${CHROMIUM} is not installed (Debian's chromium; .ci/run installs it)`;
  }
}

const skip = chromiumMissing();
if (skip) console.warn(`dashboard_browser_test: browser test skipped: ${skip}`);

async function withManager(fn: (m: Manager) => Promise<void>): Promise<void> {
  const p = await jobProject({
    "blocks/fast.lua": 'io.stderr:write("fast block says hello\\n")\nreturn "fast result"',
    "blocks/fast.job.toml": 'timeout = "2m"\n',
  });
  const m = await startManager(p.root, p.home);
  try {
    await fn(m);
  } finally {
    assert.equal(await m.stop(), 0);
  }
}

Deno.test({
  name: "attack: the dashboard page needs no token but keeps the Host/Origin checks and holds no secret",
  ...opts,
  fn: () =>
    withManager(async (m) => {
      const r = await fetch(m.url + "/");
      const html = await r.text();
      assert.equal(r.status, 200);
      assert.match(r.headers.get("content-type")!, /^text\/html/);
      const csp = r.headers.get("content-security-policy")!;
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
      assert.match(csp, /connect-src 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
      assert.equal(r.headers.get("x-frame-options"), "DENY");
      assert.ok(!html.includes(m.token), "the page carries the token");
      assert.doesNotMatch(html, /\b(src|href)="(https?:)?\/\//, "the page loads something from outside");

      for (const host of ["evil.example", `evil.example:${m.port}`, "127.0.0.1.evil.example"]) {
        assert.equal((await rawRequest(m.port, "/", [`Host: ${host}`])).status, 403, host);
      }
      const foreign = await rawRequest(m.port, "/", [
        `Host: 127.0.0.1:${m.port}`,
        "Origin: http://evil.example",
      ]);
      assert.equal(foreign.status, 403);
      assert.equal((await rawRequest(m.port, "/", [`Host: localhost:${m.port}`])).status, 200);
      const post = await fetch(m.url + "/", { method: "POST" });
      assert.deepEqual([post.status, (await post.json()).error], [405, "method_not_allowed"]);
      // Only `/` itself is open: the page's neighbours still want the token.
      for (const path of ["/index.html", "//jobs", "/jobs/"]) {
        const other = await fetch(m.url + path);
        await other.body?.cancel();
        assert.equal(other.status, 401, path);
      }
    }),
});

Deno.test({
  name: "serve: the dashboard in headless chromium lists the job, runs it now, shows it ok, screenshots",
  ...opts,
  ignore: skip !== undefined,
  fn: () =>
    withManager(async (m) => {
      // deno-lint-ignore no-import-prefix -- test-only package, kept out of deno.json's import map (tools/gen_run_lock.ts)
      const { chromium } = await import("npm:playwright-core@1.65.1");
      const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
      try {
        const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
        page.setDefaultTimeout(60_000);
        const requests: string[] = [];
        const cspErrors: string[] = [];
        page.on("request", (r) => requests.push(r.url()));
        page.on("console", (msg) => {
          if (/Content Security Policy/i.test(msg.text())) cspErrors.push(msg.text());
        });
        page.on("pageerror", (e) => cspErrors.push(`page error: ${e.message}`));

        await page.goto(m.url + "/");
        await page.waitForSelector("#login:not([hidden])");
        await page.fill("#token", "not-the-token");
        await page.click("#save-token");
        await page.locator("#status", { hasText: "refused" }).waitFor();
        assert.ok(await page.isVisible("#token"));

        await page.fill("#token", m.token);
        await page.click("#save-token");
        await page.waitForSelector('#jobs tr[data-job="fast"]');
        assert.equal(
          await page.evaluate(() => sessionStorage.getItem("agent-block-serve-token")),
          m.token,
        );
        // The token outlives a reload of the tab (session storage), so it is entered once.
        await page.reload();
        await page.waitForSelector('#jobs tr[data-job="fast"]');
        assert.equal(await page.isVisible("#login"), false);
        assert.equal((await m.api("/runs?job=fast")).body.runs.length, 0);

        await page.click('#jobs tr[data-job="fast"] button.run-now');
        await page.waitForSelector('#runs tr[data-job="fast"] td.state-ok');
        const runs = (await m.api("/runs?job=fast")).body.runs;
        assert.equal(runs.length, 1);
        assert.equal(runs[0].state, "ok");
        assert.equal(runs[0].requested, true);
        const row = `#runs tr[data-run="${runs[0].run_id}"]`;
        assert.equal(await page.textContent(`${row} td.result`), "fast result");
        await page.waitForSelector('#jobs tr[data-job="fast"] td.state-ok');

        await page.click(`${row} button.show`);
        await page.locator("#stderr", { hasText: "fast block says hello" }).waitFor();

        const dir = await tempDir("ab_dashboard_");
        const shot = join(dir, "dashboard.png");
        await page.screenshot({ path: shot, fullPage: true });
        const png = Deno.readFileSync(shot);
        assert.ok(png.length > 1000, `screenshot of ${png.length} bytes`);
        assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

        assert.deepEqual(cspErrors, []);
        const outside = requests.filter((u) => !u.startsWith(m.url + "/") && !u.startsWith("data:"));
        assert.deepEqual(outside, [], "the page loaded something from outside");
      } finally {
        await browser.close();
      }
    }),
});
