// Shared helpers for the domain tests: watching a blocked call without awaiting it, a clock
// whose timers are late (to test the "due expiry processed first" rule), and temp DB files.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock, type TimerHandle } from "../../src/domain/clock.ts";
import { settle } from "../helpers/kernel.ts";

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
