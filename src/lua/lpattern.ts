/**
 * Lua 5.4's pattern matcher (lstrlib.c: `match` and its helpers), ported to TypeScript so that a
 * match can be stopped: the C matcher is one wasm call that runs no Lua instruction, so neither
 * the CPU limit nor a signal could end a pathological pattern (`("a"):rep(5000):find("a*a*a*b")`
 * takes hours in C). This one counts its steps and asks `MatchState.tick` every `TICK_STEPS`;
 * `tick` may throw (the CPU limit, the bound on a stretch that cannot be interrupted).
 *
 * Owns matching only, over bytes: the subject and the pattern as `Uint8Array`s, positions as
 * 0-based offsets. Argument handling, `find`/`match`/`gmatch`/`gsub` semantics and the choice
 * between this matcher and the C one live in src/host/strings.ts and src/lua/prelude.lua.
 *
 * Invariant: the same answers and the same error messages as the C matcher of the wasmoon build
 * (tests/lua/lpattern_test.ts compares them on many patterns and subjects). Character classes are
 * those of the "C" locale, as in that build.
 */

/** A malformed pattern or a limit of the matcher (the C matcher's `luaL_error` messages). */
export class PatternError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PatternError";
  }
}

const L_ESC = 0x25; // '%'
const MAXCCALLS = 200;
/** Most captures in one pattern (LUA_MAXCAPTURES). */
export const MAXCAPTURES = 32;
/** A capture still open. */
export const CAP_UNFINISHED = -1;
/** A position capture `()`. */
export const CAP_POSITION = -2;
/** Steps between two calls of `tick`. */
export const TICK_STEPS = 1 << 14;

const SPECIAL = new Uint8Array(256);
for (const c of "^$*+?.([%-") SPECIAL[c.charCodeAt(0)] = 1;

/** Whether `p` has none of the pattern specials (then `find` searches it as plain text). */
export function noSpecials(p: Uint8Array): boolean {
  for (let i = 0; i < p.length; i++) if (SPECIAL[p[i]]) return false;
  return true;
}

// Character classes of the "C" locale, by class letter (lower case), as bit sets over bytes.
const CLASSES = new Map<number, Uint8Array>();
{
  const set = (letter: string, test: (c: number) => boolean) => {
    const t = new Uint8Array(256);
    for (let c = 0; c < 256; c++) t[c] = test(c) ? 1 : 0;
    CLASSES.set(letter.charCodeAt(0), t);
  };
  const upper = (c: number) => c >= 65 && c <= 90;
  const lower = (c: number) => c >= 97 && c <= 122;
  const digit = (c: number) => c >= 48 && c <= 57;
  const alpha = (c: number) => upper(c) || lower(c);
  const alnum = (c: number) => alpha(c) || digit(c);
  const graph = (c: number) => c >= 33 && c <= 126;
  set("a", alpha);
  set("c", (c) => c < 32 || c === 127);
  set("d", digit);
  set("g", graph);
  set("l", lower);
  set("p", (c) => graph(c) && !alnum(c));
  set("s", (c) => c === 32 || (c >= 9 && c <= 13));
  set("u", upper);
  set("w", alnum);
  set("x", (c) => digit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70));
}

function matchClass(c: number, cl: number): boolean {
  const lowerCl = cl >= 65 && cl <= 90 ? cl + 32 : cl;
  const table = CLASSES.get(lowerCl);
  if (!table) return cl === c;
  const res = table[c] === 1;
  return cl >= 65 && cl <= 90 ? !res : res;
}

/** The state of one match attempt (lstrlib's MatchState). */
export class MatchState {
  /** Captures: start offset and length (or `CAP_UNFINISHED` / `CAP_POSITION`). */
  readonly capInit = new Int32Array(MAXCAPTURES);
  readonly capLen = new Int32Array(MAXCAPTURES);
  /** Number of captures opened so far. */
  level = 0;
  #depth = MAXCCALLS;
  /** Steps left before the next `tick`. */
  budget = TICK_STEPS;

  /**
   * @param src the subject
   * @param pat the pattern (without a leading `^` the caller treated as an anchor)
   * @param tick called every `TICK_STEPS` steps; may throw to end the match
   */
  constructor(public src: Uint8Array, public pat: Uint8Array, public tick: () => void) {}

  /** Reuses this state for another subject and pattern. */
  prepare(src: Uint8Array, pat: Uint8Array, tick: () => void): this {
    this.src = src;
    this.pat = pat;
    this.tick = tick;
    this.budget = TICK_STEPS;
    this.reset();
    return this;
  }

  /** Resets the captures before a match at another position (lstrlib's `reprepstate`). */
  reset(): void {
    this.level = 0;
    this.#depth = MAXCCALLS;
  }

  /** The end offset of a match of the pattern at `s`, or -1. */
  match(s: number): number {
    return this.#match(s, 0);
  }

  #step(): void {
    if (--this.budget <= 0) {
      this.budget = TICK_STEPS;
      this.tick();
    }
  }

  #match(s: number, p: number): number {
    if (this.#depth-- === 0) throw new PatternError("pattern too complex");
    const r = this.#doMatch(s, p);
    this.#depth++;
    return r;
  }

  #doMatch(s: number, p: number): number {
    const pat = this.pat;
    const pEnd = pat.length;
    while (true) {
      this.#step();
      if (p === pEnd) return s;
      const c = pat[p];
      if (c === 0x28 /* ( */) {
        if (p + 1 < pEnd && pat[p + 1] === 0x29 /* ) */) return this.#startCapture(s, p + 2, CAP_POSITION);
        return this.#startCapture(s, p + 1, CAP_UNFINISHED);
      }
      if (c === 0x29 /* ) */) return this.#endCapture(s, p + 1);
      if (c === 0x24 /* $ */ && p + 1 === pEnd) return s === this.src.length ? s : -1;
      if (c === L_ESC) {
        const n = pat[p + 1];
        if (n === 0x62 /* b */) {
          s = this.#matchBalance(s, p + 2);
          if (s === -1) return -1;
          p += 4;
          continue;
        }
        if (n === 0x66 /* f */) {
          p += 2;
          if (pat[p] !== 0x5b /* [ */) throw new PatternError("missing '[' after '%f' in pattern");
          const ep = this.#classEnd(p);
          const previous = s === 0 ? 0 : this.src[s - 1];
          const current = s < this.src.length ? this.src[s] : 0;
          if (!this.#matchBracketClass(previous, p, ep - 1) && this.#matchBracketClass(current, p, ep - 1)) {
            p = ep;
            continue;
          }
          return -1;
        }
        if (n >= 0x30 && n <= 0x39) {
          s = this.#matchCapture(s, n);
          if (s === -1) return -1;
          p += 2;
          continue;
        }
      }
      // default: a single character class, maybe with a repetition suffix
      const ep = this.#classEnd(p);
      const e = pat[ep];
      if (!this.#singleMatch(s, p, ep)) {
        if (e === 0x2a /* * */ || e === 0x3f /* ? */ || e === 0x2d /* - */) {
          p = ep + 1;
          continue;
        }
        return -1;
      }
      if (e === 0x3f /* ? */) {
        const res = this.#match(s + 1, ep + 1);
        if (res !== -1) return res;
        p = ep + 1;
        continue;
      }
      if (e === 0x2b /* + */) return this.#maxExpand(s + 1, p, ep);
      if (e === 0x2a /* * */) return this.#maxExpand(s, p, ep);
      if (e === 0x2d /* - */) return this.#minExpand(s, p, ep);
      s++;
      p = ep;
    }
  }

  #classEnd(p: number): number {
    const pat = this.pat;
    const pEnd = pat.length;
    const c = pat[p++];
    if (c === L_ESC) {
      if (p >= pEnd) throw new PatternError("malformed pattern (ends with '%')");
      return p + 1;
    }
    if (c === 0x5b /* [ */) {
      if (pat[p] === 0x5e /* ^ */) p++;
      do {
        if (p >= pEnd) throw new PatternError("malformed pattern (missing ']')");
        if (pat[p++] === L_ESC && p < pEnd) p++;
      } while (pat[p] !== 0x5d /* ] */);
      return p + 1;
    }
    return p;
  }

  #singleMatch(s: number, p: number, ep: number): boolean {
    if (s >= this.src.length) return false;
    const c = this.src[s];
    const pc = this.pat[p];
    if (pc === 0x2e /* . */) return true;
    if (pc === L_ESC) return matchClass(c, this.pat[p + 1]);
    if (pc === 0x5b /* [ */) return this.#matchBracketClass(c, p, ep - 1);
    return pc === c;
  }

  #matchBracketClass(c: number, p: number, ec: number): boolean {
    const pat = this.pat;
    let sig = true;
    if (pat[p + 1] === 0x5e /* ^ */) {
      sig = false;
      p++;
    }
    while (++p < ec) {
      if (pat[p] === L_ESC) {
        p++;
        if (matchClass(c, pat[p])) return sig;
      } else if (pat[p + 1] === 0x2d /* - */ && p + 2 < ec) {
        p += 2;
        if (pat[p - 2] <= c && c <= pat[p]) return sig;
      } else if (pat[p] === c) return sig;
    }
    return !sig;
  }

  #matchBalance(s: number, p: number): number {
    const pat = this.pat;
    if (p >= pat.length - 1) throw new PatternError("malformed pattern (missing arguments to '%b')");
    const src = this.src;
    if (s >= src.length || src[s] !== pat[p]) return -1;
    const b = pat[p];
    const e = pat[p + 1];
    let cont = 1;
    while (++s < src.length) {
      this.#step();
      const c = src[s];
      if (c === e) {
        if (--cont === 0) return s + 1;
      } else if (c === b) cont++;
    }
    return -1;
  }

  #maxExpand(s: number, p: number, ep: number): number {
    let i = 0;
    while (this.#singleMatch(s + i, p, ep)) {
      this.#step();
      i++;
    }
    while (i >= 0) {
      const res = this.#match(s + i, ep + 1);
      if (res !== -1) return res;
      i--;
    }
    return -1;
  }

  #minExpand(s: number, p: number, ep: number): number {
    while (true) {
      const res = this.#match(s, ep + 1);
      if (res !== -1) return res;
      if (!this.#singleMatch(s, p, ep)) return -1;
      s++;
    }
  }

  #startCapture(s: number, p: number, what: number): number {
    const level = this.level;
    if (level >= MAXCAPTURES) throw new PatternError("too many captures");
    this.capInit[level] = s;
    this.capLen[level] = what;
    this.level = level + 1;
    const res = this.#match(s, p);
    if (res === -1) this.level--;
    return res;
  }

  #endCapture(s: number, p: number): number {
    const l = this.#captureToClose();
    this.capLen[l] = s - this.capInit[l];
    const res = this.#match(s, p);
    if (res === -1) this.capLen[l] = CAP_UNFINISHED;
    return res;
  }

  #captureToClose(): number {
    for (let level = this.level - 1; level >= 0; level--) {
      if (this.capLen[level] === CAP_UNFINISHED) return level;
    }
    throw new PatternError("invalid pattern capture");
  }

  #matchCapture(s: number, digit: number): number {
    const l = this.checkCapture(digit - 0x31);
    const len = this.capLen[l];
    const src = this.src;
    if (src.length - s < len) return -1;
    const from = this.capInit[l];
    for (let i = 0; i < len; i++) if (src[from + i] !== src[s + i]) return -1;
    return s + len;
  }

  /** Capture index `l` (0-based) when it refers to a closed capture, else the C error. */
  checkCapture(l: number): number {
    if (l < 0 || l >= this.level || this.capLen[l] === CAP_UNFINISHED) {
      throw new PatternError(`invalid capture index %${l + 1}`);
    }
    return l;
  }
}
