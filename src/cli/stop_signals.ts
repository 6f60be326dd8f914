/**
 * How the long-lived commands (`run`, `flow`, `serve`, `worker`, `mcp`, `a2a`) hear that they are
 * asked to stop, and how a server hands its last answers over before it closes.
 *
 * Layer: cli (the edge: only here are process signals listened to). Invariants: a listener is
 * removed when its scope ends (`using`), so a command run in-process (tests, an embedder calling
 * the CLI) leaves no listener behind; a server closes only after every run it started has
 * settled, so no request waiting for its run is cut off.
 */

/** The signals that ask a command to stop. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

/** One of `STOP_SIGNALS`. */
export type StopSignal = typeof STOP_SIGNALS[number];

/** Until the result is disposed, SIGINT and SIGTERM call `onSignal` with the signal's name. */
export function onStopSignals(onSignal: (sig: StopSignal) => void): Disposable {
  const fns = STOP_SIGNALS.map((sig) => [sig, () => onSignal(sig)] as const);
  for (const [sig, fn] of fns) Deno.addSignalListener(sig, fn);
  return {
    [Symbol.dispose]: () => {
      for (const [sig, fn] of fns) Deno.removeSignalListener(sig, fn);
    },
  };
}

/**
 * Once `stop` aborts: waits for every one of `runs` to settle (aborting `stop` ends them), gives
 * the protocol layer one turn of the event loop to hand the last answers over, then calls
 * `shutdown`.
 */
export function shutdownAfterRuns(
  stop: AbortSignal,
  runs: ReadonlySet<Promise<unknown>>,
  shutdown: () => Promise<void>,
): void {
  stop.addEventListener(
    "abort",
    () =>
      void Promise.allSettled([...runs])
        .then(() => new Promise((r) => setTimeout(r, 0)))
        .then(shutdown),
    { once: true },
  );
}
