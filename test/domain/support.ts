// Shared helpers for the domain tests: watching a blocked call without awaiting it, a clock
// whose timers are late (to test the "due expiry processed first" rule), temp DB files, and
// kernels restarted on one file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock, type TimerHandle } from "../../src/domain/clock.ts";
import { afterEach, beforeEach } from "bun:test";
import { makeKernel, settle, type TestKernel } from "../helpers/kernel.ts";

export interface Tracked<T> {
  readonly promise: Promise<T>;
  readonly done: boolean;
  readonly value: T | undefined;
}

/** Watches a promise so a test can ask, without awaiting, whether it has been answered. */
export function track<T>(promise: Promise<T>): Tracked<T> {
  let done = false;
  let value: T | undefined;
  promise.then((v) => {
    done = true;
    value = v;
  });
  return {
    promise,
    get done() {
      return done;
    },
    get value() {
      return value;
    },
  };
}

/** Lets every answer queued after a commit reach its caller. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 4; i++) await settle();
}

/** A manual clock whose timers never fire: time moves, but expiry is left to the next call. */
export class LateClock extends ManualClock {
  override setTimer(_fn: () => void, _delayMs: number): TimerHandle {
    return { id: -1 };
  }
  override clearTimer(_handle: TimerHandle): void {}
}

/** A fresh directory for an on-disk database; remove it with the returned function. */
export function tempDbPath(): { path: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "airlock-domain-"));
  return { path: join(dir, "airlock.db"), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Kernels on one SQLite file, for restart tests: a fresh file before each test, `openAt(now)`
 * starts a kernel on it at that time, `shut(k)` stops one (as a daemon stops: the queues
 * emptied, the store closed), and every kernel still open is shut after each test.
 */
export function useRestarts() {
  let db: ReturnType<typeof tempDbPath> | undefined;
  const open: TestKernel[] = [];
  beforeEach(() => {
    db = tempDbPath();
  });
  afterEach(async () => {
    for (const k of [...open]) await shut(k);
    db?.cleanup();
  });
  async function openAt(now: number): Promise<TestKernel> {
    const k = await makeKernel({ path: db!.path, clock: new ManualClock(now) });
    open.push(k);
    return k;
  }
  async function shut(k: TestKernel): Promise<void> {
    k.kernel.close();
    await settle();
    k.store.close();
    open.splice(open.indexOf(k), 1);
  }
  return { openAt, shut };
}
