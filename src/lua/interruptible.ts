/**
 * The host side of the library calls made interruptible (src/lua/interruptible.lua): pattern
 * matching on the ported matcher (src/lua/lpattern.ts) for `string.find`, `match`, `gmatch` and
 * `gsub`, whenever the C matcher could run for long.
 *
 * Owns three runtime primitives:
 * - `str_info(p, gmatch)`: what the Lua side needs to choose a matcher for pattern `p`: whether it
 *   is well formed (so the C matcher cannot raise an error, which would point at the wrong line),
 *   the number of its captures, and its backtracking degree `k` — the worst case of a match is
 *   about `(n + 1) ^ k` steps per start position on `n` bytes of subject (one repetition that ends
 *   the pattern, which never backtracks, is not counted);
 * - `str_search(s, p, init, anchor, last, whole, plain, level)`: one search from `init` (1-based),
 *   `find`/`match`/`gmatch` style;
 * - `str_batch(s, p, init, anchor, last, buf, level)`: successive matches, `gmatch`/`gsub` style,
 *   several per call (for `gmatch` and `gsub` with a function or a table);
 * - `str_gsub(s, p, repl, max, src, last, n, level)`: `gsub` with a string replacement, from
 *   offset `src` on.
 *
 * Invariants:
 * - A search stops between two start positions once the run is due to return to the event loop
 *   (`PREEMPT_MS`, src/lua/watchdog.ts) and Lua can yield there: it answers `true, next_init`
 *   (gsub: `false, piece, src, last, n`) and the Lua side yields and calls again. Matching at one
 *   start position cannot be split: the CPU limit ends it, and so does a stretch of
 *   `UNINTERRUPTIBLE_MS` without a return to the event loop, with a Lua error naming the pattern
 *   as too expensive (a match that backtracks that long is pathological).
 * - Errors are the C matcher's, at the position `level` frames up (the caller of the string
 *   function, or none when that is a C function — as `luaL_error` would place them).
 */
import type { LuaEngine } from "./engine.ts";
import { CAP_POSITION, CAP_UNFINISHED, MatchState, PatternError, TICK_STEPS } from "./lpattern.ts";
import { PREEMPT_MS, UNINTERRUPTIBLE_MS } from "./watchdog.ts";
import { LuaErrorValue } from "../json/values.ts";

/** What `str_info` reports about a pattern. */
export interface PatternInfo {
  /** Well formed, short enough that the C matcher cannot raise an error on it. */
  valid: boolean;
  /** Number of captures. */
  captures: number;
  /** Backtracking degree (see the module doc). */
  k: number;
}

/** The C matcher's recursion limit is 200 calls: longer patterns are left to the ported matcher. */
const MAX_C_PATTERN = 150;

/**
 * Analyses pattern `p` (as `find`, `match` and `gsub` read it, or as `gmatch` reads it: a leading
 * `^` is then a plain character).
 */
export function patternInfo(p: Uint8Array, gmatch: boolean): PatternInfo {
  const bad = { valid: false, captures: 0, k: 0 };
  const n = p.length;
  let i = !gmatch && p[0] === 0x5e ? 1 : 0;
  let k = 0;
  let captures = 0;
  const open: number[] = [];
  const closed: boolean[] = [];
  let lastRepeats = false;
  const classEnd = (at: number): number => {
    const c = p[at++];
    if (c === 0x25) return at >= n ? -1 : at + 1;
    if (c === 0x5b) {
      if (p[at] === 0x5e) at++;
      do {
        if (at >= n) return -1;
        if (p[at++] === 0x25 && at < n) at++;
      } while (p[at] !== 0x5d);
      return at + 1;
    }
    return at;
  };
  while (i < n) {
    const c = p[i];
    if (c === 0x28) {
      if (captures >= 32) return bad;
      if (p[i + 1] === 0x29) {
        closed[captures++] = true;
        i += 2;
      } else {
        open.push(captures);
        closed[captures++] = false;
        i++;
      }
      continue;
    }
    if (c === 0x29) {
      const l = open.pop();
      if (l === undefined) return bad;
      closed[l] = true;
      i++;
      continue;
    }
    if (c === 0x24 && i + 1 === n) {
      lastRepeats = false;
      i++;
      continue;
    }
    if (c === 0x25) {
      const d = p[i + 1];
      if (d === 0x62) {
        if (i + 2 >= n - 1) return bad;
        k++;
        lastRepeats = false;
        i += 4;
        continue;
      }
      if (d === 0x66) {
        i += 2;
        if (p[i] !== 0x5b) return bad;
        const ep = classEnd(i);
        if (ep < 0) return bad;
        lastRepeats = false;
        i = ep;
        continue;
      }
      if (d >= 0x30 && d <= 0x39) {
        const l = d - 0x31;
        if (l < 0 || l >= captures || !closed[l]) return bad;
        k++;
        lastRepeats = false;
        i += 2;
        continue;
      }
    }
    const ep = classEnd(i);
    if (ep < 0) return bad;
    const q = p[ep];
    if (q === 0x2a || q === 0x2b || q === 0x2d || q === 0x3f) {
      k++;
      lastRepeats = true;
      i = ep + 1;
    } else {
      lastRepeats = false;
      i = ep;
    }
  }
  if (open.length || n > MAX_C_PATTERN) return bad;
  return { valid: true, captures, k: lastRepeats ? k - 1 : k };
}

/**
 * The per-call machinery of a search: the tick that checks the limits and notices a due
 * preemption, and the match state. One of each per engine, reused (a search calls no Lua).
 */
class Searcher {
  preemptDue = false;
  yieldable = false;
  readonly tick: () => void;
  readonly ms = new MatchState(new Uint8Array(0), new Uint8Array(0), () => {});
  constructor(engine: LuaEngine) {
    const dog = engine.watchdog;
    this.tick = () => {
      dog.checkCpu(performance.now());
      const stretch = dog.stretchMs();
      if (stretch < PREEMPT_MS) return;
      if (dog.overBound(stretch)) {
        throw new PatternError(
          `pattern too expensive: matching ran for more than ${UNINTERRUPTIBLE_MS / 1000} s without ` +
            `a point where the run can be interrupted (repetitions that overlap make the matcher backtrack ` +
            `without end; simplify the pattern)`,
        );
      }
      if (this.yieldable) this.preemptDue = true;
    };
  }
  /** The match state for `src` and `pat`, for a call from thread `L`. */
  start(engine: LuaEngine, L: number, src: Uint8Array, pat: Uint8Array): MatchState {
    this.preemptDue = false;
    this.yieldable = engine.api.isyieldable(L);
    return this.ms.prepare(src, pat, this.tick);
  }
}

const searchers = new WeakMap<LuaEngine, Searcher>();
function searcherOf(engine: LuaEngine): Searcher {
  let s = searchers.get(engine);
  if (!s) searchers.set(engine, s = new Searcher(engine));
  return s;
}

/** Raises `msg` as a Lua error placed `level` frames up (see the module doc). */
function raise(engine: LuaEngine, L: number, level: number, msg: string): never {
  engine.api.where(L, level);
  const at = String(engine.toJs(L, -1) ?? "");
  engine.api.pop(L, 1);
  throw new LuaErrorValue(at + msg, msg);
}

/** Pushes capture `i` of a match `s..e` (the whole match for capture 0 of a pattern without). */
function pushCapture(engine: LuaEngine, L: number, ms: MatchState, i: number, s: number, e: number): void {
  const api = engine.api;
  if (i >= ms.level) {
    if (i !== 0) throw new PatternError(`invalid capture index %${i + 1}`);
    api.pushsubstring(L, 1, s, e - s);
    return;
  }
  const len = ms.capLen[i];
  if (len === CAP_UNFINISHED) throw new PatternError("unfinished capture");
  if (len === CAP_POSITION) api.pushinteger(L, BigInt(ms.capInit[i] + 1));
  else api.pushsubstring(L, 1, ms.capInit[i], len);
}

/**
 * The next match from offset `s1` whose end is not `last`: sets `found.start`/`found.end` and
 * answers true; false when there is none; or, between two start positions once a preemption is
 * due, sets `found.resume` (the offset to go on from) and answers false.
 */
function nextMatch(
  sr: Searcher,
  ms: MatchState,
  s1: number,
  anchor: boolean,
  last: number,
  found: { start: number; end: number; resume: number },
): boolean {
  const len = ms.src.length;
  found.resume = -1;
  while (true) {
    ms.reset();
    const e = ms.match(s1);
    if (e !== -1 && e !== last) {
      found.start = s1;
      found.end = e;
      return true;
    }
    if (anchor || s1 >= len) return false;
    s1++;
    if (sr.preemptDue) {
      found.resume = s1;
      return false;
    }
  }
}

const found = { start: 0, end: 0, resume: -1 };

/** `str_search`: see the module doc. Returns the number of values pushed. */
export function strSearch(engine: LuaEngine, L: number): number {
  const api = engine.api;
  const src = api.tobytesView(L, 1);
  const pat0 = api.tobytesView(L, 2);
  let s1 = api.tonumber(L, 3) - 1;
  const honourAnchor = api.toboolean(L, 4);
  const last = api.tonumber(L, 5);
  const whole = api.toboolean(L, 6);
  const plain = api.toboolean(L, 7);
  const level = api.tonumber(L, 8);
  const sr = searcherOf(engine);
  try {
    if (plain) {
      sr.start(engine, L, src, pat0);
      const m = pat0.length;
      if (m === 0) return pushFound(api, L, s1, s1);
      let spent = 0;
      const first = pat0[0];
      const lastStart = src.length - m;
      while (s1 <= lastStart) {
        const at = src.indexOf(first, s1);
        if (at < 0 || at > lastStart) break;
        let j = 1;
        while (j < m && src[at + j] === pat0[j]) j++;
        if (j === m) return pushFound(api, L, at, at + m);
        spent += j + (at - s1);
        s1 = at + 1;
        if (spent >= TICK_STEPS) {
          spent = 0;
          sr.tick();
          if (sr.preemptDue) return pushResume(api, L, s1);
        }
      }
      api.pushboolean(L, false);
      return 1;
    }
    const anchor = honourAnchor && pat0[0] === 0x5e;
    const ms = sr.start(engine, L, src, anchor ? pat0.subarray(1) : pat0);
    if (!nextMatch(sr, ms, s1, anchor, last, found)) {
      if (found.resume >= 0) return pushResume(api, L, found.resume);
      api.pushboolean(L, false);
      return 1;
    }
    const { start, end } = found;
    const n = pushFound(api, L, start, end);
    const nlevels = ms.level === 0 && whole ? 1 : ms.level;
    if (!api.checkstack(L, nlevels)) throw new PatternError("too many captures");
    for (let i = 0; i < nlevels; i++) pushCapture(engine, L, ms, i, start, end);
    return n + nlevels;
  } catch (e) {
    if (e instanceof PatternError) raise(engine, L, level, e.message);
    throw e;
  }
}

/** Most matches `str_batch` answers at once. */
const BATCH = 64;

/**
 * `str_batch(s, p, init, anchor, last, buf, level)`: up to `BATCH` successive matches
 * (`gmatch`/`gsub` style: each search goes on from the end of the previous match, and a match
 * ending where the previous one did is passed over), written into table `buf` as `start, end,
 * captures...` (the whole match when the pattern has none) per match. Answers `count, per,
 * next_init, last, state` — `per` values per match; `state` 0: no more matches, 1: go on,
 * 2: go on after yielding (a preemption is due).
 */
export function strBatch(engine: LuaEngine, L: number): number {
  const api = engine.api;
  const src = api.tobytesView(L, 1);
  const pat0 = api.tobytesView(L, 2);
  let s1 = api.tonumber(L, 3) - 1;
  const honourAnchor = api.toboolean(L, 4);
  let last = api.tonumber(L, 5);
  const level = api.tonumber(L, 7);
  const sr = searcherOf(engine);
  let count = 0;
  let per = 2;
  let state = 1;
  try {
    const anchor = honourAnchor && pat0[0] === 0x5e;
    const ms = sr.start(engine, L, src, anchor ? pat0.subarray(1) : pat0);
    let k = 0;
    while (count < BATCH) {
      if (s1 > src.length) {
        state = 0;
        break;
      }
      if (!nextMatch(sr, ms, s1, anchor, last, found)) {
        if (found.resume >= 0) {
          s1 = found.resume;
          state = 2;
        } else {
          s1 = src.length + 1;
          state = 0;
        }
        break;
      }
      const { start, end } = found;
      const nlevels = ms.level === 0 ? 1 : ms.level;
      per = 2 + nlevels;
      api.pushinteger(L, BigInt(start + 1));
      api.rawseti(L, 6, ++k);
      api.pushinteger(L, BigInt(end));
      api.rawseti(L, 6, ++k);
      for (let i = 0; i < nlevels; i++) {
        pushCapture(engine, L, ms, i, start, end);
        api.rawseti(L, 6, ++k);
      }
      count++;
      s1 = last = end;
      if (anchor) {
        state = 0;
        break;
      }
      if (sr.preemptDue) {
        state = 2;
        break;
      }
    }
  } catch (e) {
    if (e instanceof PatternError) raise(engine, L, level, e.message);
    throw e;
  }
  api.pushinteger(L, BigInt(count));
  api.pushinteger(L, BigInt(per));
  api.pushinteger(L, BigInt(s1 + 1));
  api.pushinteger(L, BigInt(last));
  api.pushinteger(L, BigInt(state));
  return 5;
}

function pushFound(api: LuaEngine["api"], L: number, s: number, e: number): number {
  api.pushinteger(L, BigInt(s + 1));
  api.pushinteger(L, BigInt(e));
  return 2;
}

function pushResume(api: LuaEngine["api"], L: number, next: number): number {
  api.pushboolean(L, true);
  api.pushinteger(L, BigInt(next + 1));
  return 2;
}

/** Bytes appended in pieces, for `gsub`'s result. */
class ByteSink {
  buf = new Uint8Array(256);
  len = 0;
  add(bytes: Uint8Array, from: number, to: number): void {
    const n = to - from;
    if (n <= 0) return;
    this.#room(n);
    this.buf.set(bytes.subarray(from, to), this.len);
    this.len += n;
  }
  byte(b: number): void {
    this.#room(1);
    this.buf[this.len++] = b;
  }
  text(s: string): void {
    for (let i = 0; i < s.length; i++) this.byte(s.charCodeAt(i));
  }
  #room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }
}

/** Appends replacement `repl` for match `s..e` (lstrlib's `add_s`). */
function addS(out: ByteSink, ms: MatchState, repl: Uint8Array, s: number, e: number): void {
  const src = ms.src;
  let i = 0;
  while (i < repl.length) {
    const pct = repl.indexOf(0x25, i);
    if (pct < 0) {
      out.add(repl, i, repl.length);
      return;
    }
    out.add(repl, i, pct);
    const c = pct + 1 < repl.length ? repl[pct + 1] : 0;
    if (c === 0x25) out.byte(0x25);
    else if (c === 0x30) out.add(src, s, e);
    else if (c >= 0x31 && c <= 0x39) {
      const l = c - 0x31;
      if (l >= ms.level) {
        if (l !== 0) throw new PatternError(`invalid capture index %${l + 1}`);
        out.add(src, s, e);
      } else {
        const len = ms.capLen[l];
        if (len === CAP_UNFINISHED) throw new PatternError("unfinished capture");
        if (len === CAP_POSITION) out.text(String(ms.capInit[l] + 1));
        else out.add(src, ms.capInit[l], ms.capInit[l] + len);
      }
    } else throw new PatternError("invalid use of '%' in replacement string");
    i = pct + 2;
  }
}

/** `str_gsub`: see the module doc. */
export function strGsub(engine: LuaEngine, L: number): number {
  const api = engine.api;
  const srcBytes = api.tobytesView(L, 1);
  const pat0 = api.tobytesView(L, 2);
  const repl = api.tobytesView(L, 3).slice(); // copied: pushing the result may move the heap
  const maxN = api.tonumber(L, 4);
  let src = api.tonumber(L, 5);
  let last = api.tonumber(L, 6);
  let n = api.tonumber(L, 7);
  const level = api.tonumber(L, 8);
  const sr = searcherOf(engine);
  const anchor = pat0[0] === 0x5e;
  const ms = sr.start(engine, L, srcBytes, anchor ? pat0.subarray(1) : pat0);
  const out = new ByteSink();
  let done = true;
  try {
    let copyFrom = src;
    while (n < maxN) {
      ms.reset();
      const e = ms.match(src);
      if (e !== -1 && e !== last) {
        n++;
        out.add(srcBytes, copyFrom, src);
        addS(out, ms, repl, src, e);
        src = last = e;
        copyFrom = src;
      } else if (src < srcBytes.length) src++;
      else break;
      if (anchor) break;
      if (sr.preemptDue) {
        done = false;
        break;
      }
    }
    out.add(srcBytes, copyFrom, done ? srcBytes.length : src);
  } catch (e) {
    if (e instanceof PatternError) raise(engine, L, level, e.message);
    throw e;
  }
  const piece = out.bytes().slice(); // off the JS side before anything allocates in Lua
  api.pushboolean(L, done);
  api.pushbytes(L, piece);
  api.pushinteger(L, BigInt(src));
  api.pushinteger(L, BigInt(last));
  api.pushinteger(L, BigInt(n));
  return 5;
}
