// Bounded polling for end-to-end tests: wait for a condition the daemon reaches
// asynchronously (a waiter attached, a disconnect noticed) without sleeping blindly.

/** Polls fn until it returns a truthy value, or throws after timeoutMs with the last value seen. */
export async function until<T>(what: string, fn: () => Promise<T> | T, timeoutMs = 3000, everyMs = 10): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await fn();
    if (last) return last;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
    await Bun.sleep(everyMs);
  }
}

/** A promise with its settled state visible, to assert that a blocked call is still blocked. */
export function track<T>(p: Promise<T>): { promise: Promise<T>; settled: () => boolean; at: () => number } {
  let done = false;
  let at = Number.NaN;
  const promise = p.finally(() => {
    done = true;
    at = performance.now();
  });
  return { promise, settled: () => done, at: () => at };
}

/** A TCP port that nothing listens on right now. */
export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}
