// src/runtime/paths.ts
import { join } from "node:path";
function userHome() {
  return Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE") ?? Deno.cwd();
}
function agentBlockHome() {
  const v = Deno.env.get("AGENT_BLOCK_HOME");
  return v && v.trim() ? v : join(userHome(), ".agent-block");
}

// src/proc/child_env.ts
var HOST_CREDENTIALS = [
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "AGENT_BLOCK_MESH_SECRET_KEY"
];
var ALWAYS_ALLOWED = [
  "PATH",
  "HOME",
  "USER",
  "LANG",
  "TERM",
  "TMPDIR"
];
var SECRET_SUFFIX = /_(KEY|TOKEN|SECRET|PASSWORD)$/i;
var ChildEnvPolicyError = class extends Error {
  constructor(value) {
    super(`AGENT_BLOCK_CHILD_ENV must be 'inherit', 'strip-secrets' or 'allowlist:NAME,NAME', got '${value}'`);
    this.name = "ChildEnvPolicyError";
  }
};
function childEnv(parent, extra = {}, policy = parent["AGENT_BLOCK_CHILD_ENV"]) {
  let env;
  const p = (policy ?? "").trim();
  if (p === "" || p === "inherit") {
    env = {
      ...parent
    };
  } else if (p === "strip-secrets") {
    env = {};
    for (const [k, v] of Object.entries(parent)) if (!SECRET_SUFFIX.test(k)) env[k] = v;
  } else if (p.startsWith("allowlist:")) {
    const names = /* @__PURE__ */ new Set([
      ...ALWAYS_ALLOWED,
      ...p.slice(10).split(",").map((s) => s.trim()).filter(Boolean)
    ]);
    env = {};
    for (const [k, v] of Object.entries(parent)) if (names.has(k)) env[k] = v;
  } else {
    throw new ChildEnvPolicyError(p);
  }
  for (const k of HOST_CREDENTIALS) delete env[k];
  return Object.assign(env, extra);
}

// src/proc/group.ts
var ManagedProcess = class {
  child;
  label;
  groups;
  /** How it ended, once it has: set before `status` resolves. */
  endedBy;
  #exited;
  /**
   * Wraps a spawned child; `ProcessGroups.spawn` is the only caller.
   * @param child the group leader
   * @param label the `sh.exec` label, if any
   * @param groups the registry it belongs to
   */
  constructor(child, label, groups) {
    this.child = child;
    this.label = label;
    this.groups = groups;
    this.#exited = false;
    child.status.then(() => {
      this.#exited = true;
    }, () => {
      this.#exited = true;
    });
  }
  /** The leader's pid (= the group id). */
  get pid() {
    return this.child.pid;
  }
  /** The child's exit status (the leader's). */
  get status() {
    return this.child.status;
  }
  /** True once the leader has exited. */
  get exited() {
    return this.#exited;
  }
  /** Sends `signal` to the whole group. Returns false when the group no longer exists. */
  signalGroup(signal) {
    try {
      Deno.kill(-this.child.pid, signal);
      return true;
    } catch {
      return false;
    }
  }
  /**
   * True while any member of the group is alive. A zombie does not count: a grandchild orphaned
   * by the group's end is reparented to PID 1, and where PID 1 is slow to reap (containers
   * without an init) its zombie would otherwise hold every run's exit for the whole grace period.
   */
  groupAlive() {
    try {
      Deno.kill(-this.child.pid, "SIGCONT");
    } catch {
      return false;
    }
    return Deno.build.os !== "linux" || linuxGroupHasLiveMember(this.child.pid);
  }
  /**
   * Ends the group: SIGTERM, then SIGKILL after `graceMs` if any member remains.
   * Resolves once the leader has exited.
   */
  async terminate(graceMs = this.groups.graceMs) {
    this.endedBy ??= "terminated";
    this.signalGroup("SIGTERM");
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && this.groupAlive()) {
      await new Promise((r) => setTimeout(r, Math.min(20, Math.max(1, deadline - Date.now()))));
      if (this.#exited && !this.groupAlive()) break;
    }
    if (this.groupAlive()) this.signalGroup("SIGKILL");
    await this.child.status.catch(() => void 0);
    await this.#settle();
  }
  /** SIGKILL to the whole group at once. */
  async kill() {
    this.endedBy ??= "killed";
    this.signalGroup("SIGKILL");
    await this.child.status.catch(() => void 0);
    await this.#settle();
  }
  /**
   * After SIGKILL the leader's status can resolve while another member has the signal pending
   * but is not dead yet; wait (bounded) until the kernel has ended every member, so callers see
   * the group gone when the promise resolves.
   */
  async #settle(limitMs = 2e3) {
    const deadline = Date.now() + limitMs;
    while (this.groupAlive() && Date.now() < deadline) {
      this.signalGroup("SIGKILL");
      await new Promise((r) => setTimeout(r, 5));
    }
  }
};
var ProcessGroups = class {
  #live = /* @__PURE__ */ new Set();
  /** Grace between SIGTERM and SIGKILL, in ms (`AGENT_BLOCK_TASK_GRACE_MS`, default 1000). */
  graceMs;
  /**
   * An empty registry.
   * @param graceMs grace between SIGTERM and SIGKILL, ms
   */
  constructor(graceMs = 1e3) {
    this.graceMs = graceMs;
  }
  /** Starts a child as the leader of a new process group and registers it. */
  spawn(opts) {
    const [program, ...args] = opts.cmd;
    const child = new Deno.Command(program, {
      args,
      cwd: opts.cwd,
      env: childEnv(Deno.env.toObject(), opts.env ?? {}),
      clearEnv: true,
      stdin: opts.stdin ?? "null",
      stdout: opts.stdout ?? "piped",
      stderr: opts.stderr ?? "piped",
      detached: true
    }).spawn();
    const p = new ManagedProcess(child, opts.label, this);
    this.#live.add(p);
    child.status.finally(() => {
      if (!p.groupAlive()) this.#live.delete(p);
    }).catch(() => void 0);
    return p;
  }
  /** The live process started with `label`, if any. */
  byLabel(label) {
    for (const p of this.#live) if (p.label === label && (!p.exited || p.groupAlive())) return p;
    return void 0;
  }
  /** Number of registered groups. */
  get size() {
    return this.#live.size;
  }
  /** Ends every registered group (SIGTERM, then SIGKILL after the grace period). */
  async endAll(graceMs = this.graceMs) {
    const all = [
      ...this.#live
    ];
    this.#live.clear();
    await Promise.all(all.map((p) => p.exited && !p.groupAlive() ? Promise.resolve() : p.terminate(graceMs)));
  }
};
function linuxGroupHasLiveMember(pgid) {
  let entries;
  try {
    entries = Deno.readDirSync("/proc");
  } catch {
    return true;
  }
  for (const e of entries) {
    const c = e.name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    let stat;
    try {
      stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
    } catch {
      continue;
    }
    const close = stat.lastIndexOf(")");
    const fields = stat.slice(close + 2).split(" ", 3);
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true;
  }
  return false;
}

export {
  userHome,
  agentBlockHome,
  ProcessGroups
};
