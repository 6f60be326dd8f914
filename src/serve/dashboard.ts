/**
 * The job manager's dashboard: the one page `GET /` serves — the jobs, their last runs (state,
 * duration, result), a run's stderr tail, "run now" and "stop" buttons.
 *
 * Owns the page and the rule for `/`. The page is static: one HTML document with its CSS and
 * JS inline, the same bytes for every request, carrying no data and no secret. So `GET /` is
 * the one route that needs no bearer token — a browser cannot add a header to a navigation —
 * while the Host/Origin checks still apply to it (a rebinding page cannot even read it). Every
 * piece of data the page shows comes from the JSON API (`api.ts`) with the token, which the user
 * enters once and the page keeps in its `sessionStorage` (gone with the tab; never in a URL, a
 * cookie or the page); a 401 drops it and asks again.
 *
 * Invariants: the page loads nothing from outside — the Content-Security-Policy allows only its
 * own inline script and style (by their SHA-256 hashes, no `'unsafe-inline'`), `fetch` to its own
 * origin, no frames, forms, plugins or base URL; everything from the API is put into the page
 * as text (`textContent`), never as HTML, so a job name, a result or a stderr line cannot inject
 * markup. The element ids and `data-job`/`data-run` attributes are the page's test surface
 * (`tests/serve/dashboard_browser_test.ts`).
 */
import { createHash } from "node:crypto";

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; background: #fafafa; }
h1 { font-size: 1.3em; margin: 0 0 .6em; } h1 button { font-size: .6em; } h2 { font-size: 1.1em; margin: 1.2em 0 .4em; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { border: 1px solid #ddd; padding: .25em .5em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; } td.result { font-family: monospace; max-width: 30em; overflow-wrap: anywhere; }
button { font: inherit; padding: .1em .6em; margin-right: .3em; cursor: pointer; }
button:disabled { cursor: default; }
pre { background: #111; color: #eee; padding: .6em; max-height: 24em; overflow: auto; white-space: pre-wrap; }
.state { font-weight: 600; } .state-ok { color: #167a2e; } .state-running { color: #1a5fb4; }
.state-deferred { color: #8a6d00; } .state-failed, .state-timed_out, .state-lost { color: #b00020; }
.state-stopped { color: #666; } .error { color: #b00020; } .muted { color: #777; }
#status { min-height: 1.4em; } [hidden] { display: none !important; }
`;

const SCRIPT = `
"use strict";
var KEY = "agent-block-serve-token";
var busy = false;
var shownRun = null;
function $(id) { return document.getElementById(id); }
function el(tag, text, cls) {
  var e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}
function token() { return sessionStorage.getItem(KEY); }
function say(text, isError) { var s = $("status"); s.textContent = text || ""; s.className = isError ? "error" : "muted"; }
function showLogin(message) {
  $("login").hidden = false; $("main").hidden = true; $("logout").hidden = true;
  say(message || "", !!message);
}
function api(path, method) {
  var t = token();
  if (!t) { showLogin(""); return Promise.reject(new Error("no token")); }
  return fetch(path, { method: method || "GET", headers: { "Authorization": "Bearer " + t }, cache: "no-store" })
    .then(function (r) {
      if (r.status === 401) {
        sessionStorage.removeItem(KEY);
        showLogin("The manager refused that token (see ~/.agent-block/serve.token).");
        throw new Error("unauthorized");
      }
      return r.json().then(function (body) {
        if (!r.ok) throw new Error((body && (body.message || body.error)) || ("HTTP " + r.status));
        return body;
      });
    });
}
function time(ms) { return ms ? new Date(ms).toLocaleString() : ""; }
function duration(ms) {
  if (ms === null || ms === undefined) return "";
  return ms < 1000 ? ms + " ms" : (ms / 1000).toFixed(ms < 60000 ? 1 : 0) + " s";
}
function stateCell(state) { return el("td", state, "state state-" + state); }
function countsText(run) {
  var c = run.counts;
  if (!c) return "";
  return c.turns + " turns, " + c.tool_calls + " tool calls, " + c.tokens_in + "/" + c.tokens_out + " tokens" +
    (c.cost_usd !== null ? ", $" + c.cost_usd.toFixed(4) : "") +
    (c.sessions.length ? "; knl show " + c.sessions.join(", ") : "");
}
function resultText(run) {
  if (run.result !== null && run.result !== undefined) {
    var s = typeof run.result === "string" ? run.result : JSON.stringify(run.result);
    return s.length > 300 ? s.slice(0, 300) + "…" : s;
  }
  if (run.result_file) return "(" + run.result_bytes + " bytes in " + run.result_file + ")";
  return run.message || "";
}
function button(text, cls, onClick, disabled) {
  var b = el("button", text, cls);
  b.type = "button"; b.disabled = !!disabled;
  b.addEventListener("click", onClick);
  return b;
}
function runNow(name) {
  api("/jobs/" + encodeURIComponent(name) + "/runs", "POST")
    .then(function (r) { say("Run " + r.run_id + " of " + name + " requested; the next tick starts it."); refresh(); })
    .catch(function (e) { if (e.message !== "unauthorized") say("Run now failed: " + e.message, true); });
}
function stop(runId) {
  api("/runs/" + encodeURIComponent(runId), "DELETE")
    .then(function () { say("Stop of run " + runId + " requested."); refresh(); })
    .catch(function (e) { if (e.message !== "unauthorized") say("Stop failed: " + e.message, true); });
}
function renderJobs(jobs) {
  var body = $("jobs"); body.textContent = "";
  if (!jobs.length) { var tr0 = el("tr"); var td0 = el("td", "No jobs: no job.toml in this project's block roots.", "muted"); td0.colSpan = 5; tr0.appendChild(td0); body.appendChild(tr0); }
  jobs.forEach(function (j) {
    var tr = el("tr"); tr.setAttribute("data-job", j.name);
    tr.appendChild(el("td", j.name));
    if (j.error) {
      var td = el("td", j.error.file + (j.error.line ? ":" + j.error.line : "") + ": " + j.error.message, "error");
      td.colSpan = 3; tr.appendChild(td);
    } else {
      tr.appendChild(el("td", (j.every ? "every " + j.every + ", timeout " + j.timeout : "on request, timeout " + j.timeout) +
        (j.next_run_ms ? "; next " + time(j.next_run_ms) : "")));
      if (j.last_end) tr.appendChild(stateCell(j.last_end.state)); else tr.appendChild(el("td", "never run", "muted"));
      tr.appendChild(el("td", j.live_run ? "running " + j.live_run.run_id : (j.requested_run ? "requested " + j.requested_run : "")));
    }
    var actions = el("td");
    actions.appendChild(button("run now", "run-now", function () { runNow(j.name); }, !!j.error));
    actions.appendChild(button("stop", "stop", function () { stop(j.live_run.run_id); }, !j.live_run));
    tr.appendChild(actions);
    body.appendChild(tr);
  });
}
function renderRuns(runs) {
  var body = $("runs"); body.textContent = "";
  if (!runs.length) { var tr0 = el("tr"); var td0 = el("td", "No runs yet.", "muted"); td0.colSpan = 8; tr0.appendChild(td0); body.appendChild(tr0); }
  runs.forEach(function (r) {
    var tr = el("tr"); tr.setAttribute("data-run", r.run_id); tr.setAttribute("data-job", r.job);
    tr.appendChild(el("td", r.run_id)); tr.appendChild(el("td", r.job)); tr.appendChild(stateCell(r.state));
    tr.appendChild(el("td", time(r.started_ms)));
    tr.appendChild(el("td", r.state === "running" ? duration(Date.now() - r.started_ms) + "…" : duration(r.duration_ms)));
    tr.appendChild(el("td", resultText(r), "result"));
    tr.appendChild(el("td", countsText(r), "counts"));
    var actions = el("td");
    actions.appendChild(button("stderr", "show", function () { showRun(r.run_id); }));
    if (r.state === "running") actions.appendChild(button("stop", "stop", function () { stop(r.run_id); }));
    tr.appendChild(actions);
    body.appendChild(tr);
  });
}
function showRun(runId) {
  shownRun = runId;
  api("/runs/" + encodeURIComponent(runId)).then(function (r) {
    $("detail").hidden = false;
    $("detail-title").textContent = "Run " + r.run_id + " of " + r.job + ": " + r.state +
      (r.exit_code !== null ? " (exit " + r.exit_code + ")" : "");
    $("stderr").textContent = r.stderr_tail || "(no stderr)";
  }).catch(function (e) { if (e.message !== "unauthorized") say("Cannot read run " + runId + ": " + e.message, true); });
}
function refresh() {
  if (busy || !token()) return;
  busy = true;
  Promise.all([api("/jobs"), api("/runs?limit=50")]).then(function (both) {
    $("login").hidden = true; $("main").hidden = false; $("logout").hidden = false;
    renderJobs(both[0].jobs); renderRuns(both[1].runs);
    $("updated").textContent = "updated " + new Date().toLocaleTimeString();
    if (shownRun) showRun(shownRun);
  }).catch(function (e) {
    if (e.message !== "unauthorized" && e.message !== "no token") say("The manager cannot be read: " + e.message, true);
  }).then(function () { busy = false; });
}
$("login-form").addEventListener("submit", function (ev) {
  ev.preventDefault();
  var t = $("token").value.trim();
  if (!t) { say("Enter the token.", true); return; }
  sessionStorage.setItem(KEY, t); $("token").value = ""; say("");
  refresh();
});
$("logout").addEventListener("click", function () { sessionStorage.removeItem(KEY); showLogin("Token forgotten."); });
if (token()) refresh(); else showLogin("");
setInterval(refresh, 1000);
`;

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

/** The page, byte for byte. */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>agent-block serve</title>
<style>${STYLE}</style>
</head>
<body>
<h1>agent-block serve <button type="button" id="logout" hidden>forget token</button></h1>
<p id="status"></p>
<section id="login" hidden>
<form id="login-form" autocomplete="off">
<label>API token (<code>~/.agent-block/serve.token</code>):
<input id="token" type="password" size="70" spellcheck="false"></label>
<button type="submit" id="save-token">Open</button>
</form>
<p class="muted">Kept in this tab's session storage only; every request sends it as a bearer token.</p>
</section>
<section id="main" hidden>
<h2>Jobs <span id="updated" class="muted"></span></h2>
<table><thead><tr><th>Job</th><th>Schedule</th><th>Last run</th><th>Live</th><th></th></tr></thead>
<tbody id="jobs"></tbody></table>
<h2>Runs</h2>
<table><thead><tr><th>Run</th><th>Job</th><th>State</th><th>Started</th><th>Duration</th><th>Result</th><th>Did</th><th></th></tr></thead>
<tbody id="runs"></tbody></table>
<section id="detail" hidden><h2 id="detail-title"></h2><pre id="stderr"></pre></section>
</section>
<script>${SCRIPT}</script>
</body>
</html>
`;

/** The Content-Security-Policy of the page: its own inline script and style, fetch to itself. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  "img-src data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The answer to `GET /` or `HEAD /` (the caller has checked Host and Origin). */
export function dashboardResponse(method: string): Response {
  const headers = {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": DASHBOARD_CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
  };
  return new Response(method === "HEAD" ? null : DASHBOARD_HTML, { headers });
}
