import { afterEach, beforeEach } from "bun:test";
// A kernel on :memory: with a manual clock: domain tests drive time exactly, with no sleeps.
import { ManualClock } from "../../src/domain/clock.ts";
import type { JournalOptions } from "../../src/domain/journal.ts";
import { createKernel, type Kernel } from "../../src/domain/kernel.ts";
import { openStore, type SqliteStore } from "../../src/store/db.ts";

export interface TestKernel {
  kernel: Kernel;
  clock: ManualClock;
  store: SqliteStore;
}

export async function makeKernel(opts: { path?: string; clock?: ManualClock; journal?: JournalOptions } = {}): Promise<TestKernel> {
  const clock = opts.clock ?? new ManualClock();
  const store = openStore(opts.path ?? ":memory:");
  const kernel = await createKernel({ store, clock, ...(opts.journal ? { journal: opts.journal } : {}) });
  return { kernel, clock, store };
}

/** Lets pending promise continuations (answers after commit) run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

/**
 * A fresh kernel for every test of the file: registers the hooks and returns an object whose
 * fields always point at the current test's kernel, clock and store.
 */
export function useKernel(): TestKernel {
  let current: TestKernel | undefined;
  beforeEach(async () => {
    current = await makeKernel();
  });
  afterEach(async () => {
    current!.kernel.close();
    await settle(); // calls answered by close finish on the open store
    current!.store.close();
  });
  const now = () => {
    if (!current) throw new Error("useKernel: used outside a test");
    return current;
  };
  return {
    get kernel() {
      return now().kernel;
    },
    get clock() {
      return now().clock;
    },
    get store() {
      return now().store;
    },
  };
}
