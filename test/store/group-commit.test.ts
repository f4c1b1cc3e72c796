import { afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore, type Store } from "../../src/store/db.ts";
import { run } from "../../src/store/tx.ts";

const opened: Store[] = [];
function open(durability: "normal" | "full", batchBusyTurns = false) {
  const path = join(mkdtempSync(join(tmpdir(), "airlock-store-")), "state.db");
  const store = openStore(path, { durability, batchBusyTurns });
  opened.push(store);
  return { store, path };
}
afterEach(() => {
  for (const s of opened.splice(0)) {
    try {
      s.close();
    } catch {
      // closed by the test
    }
  }
});

/** What another connection (a crash survivor, or `airlock status`) can see on disk. */
function committedCounters(path: string): Record<string, number> {
  const other = new Database(path, { readonly: true });
  try {
    return Object.fromEntries((other.query("SELECT name, value FROM counters").all() as { name: string; value: number }[]).map((r) => [r.name, r.value]));
  } finally {
    other.close();
  }
}

const bump = (s: Store, name: string) =>
  s.tx(function* () {
    yield* run("INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET value = value + 1", name);
  });

describe("full durability with group commit", () => {
  test("runs synchronous=FULL", () => {
    const { store } = open("full");
    expect((store.db.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous).toBe(2);
  });

  test("batches the transactions of one event-loop turn into one commit, visible once durable() resolves", async () => {
    const { store, path } = open("full");
    for (let i = 0; i < 10; i++) bump(store, "c");
    const d = store.durable();
    expect(d).not.toBeNull();
    expect(store.durable()).toBe(d!); // every caller of this turn waits on the same commit
    expect(committedCounters(path)).toEqual({}); // nothing is on disk before the batch commits
    await d;
    expect(committedCounters(path)).toEqual({ c: 10 });
    expect(store.durable()).toBeNull();
  });

  test("a failing transaction undoes only itself, not the others of its batch", async () => {
    const { store, path } = open("full");
    bump(store, "a");
    expect(() =>
      store.tx(function* () {
        bump(store, "b");
        throw new Error("this call fails");
      }),
    ).toThrow("this call fails");
    bump(store, "c");
    await store.durable();
    expect(committedCounters(path)).toEqual({ a: 1, c: 1 });
  });

  test("afterCommit hooks run after the batch commits, and orElse runs for a failed transaction", async () => {
    const { store } = open("full");
    const seen: string[] = [];
    store.tx(function* () {
      store.afterCommit(() => seen.push("granted"));
    });
    expect(() =>
      store.tx(function* () {
        store.afterCommit(
          () => seen.push("wrong"),
          () => seen.push("rolled back"),
        );
        throw new Error("x");
      }),
    ).toThrow("x");
    expect(seen).toEqual(["rolled back"]);
    await store.durable();
    expect(seen).toEqual(["rolled back", "granted"]);
  });

  test("close commits an open batch", () => {
    const { store, path } = open("full");
    bump(store, "z");
    store.close();
    expect(committedCounters(path)).toEqual({ z: 1 });
  });
});

describe("normal durability", () => {
  test("commits each transaction at once, with nothing to wait for", () => {
    const { store, path } = open("normal");
    const seen: string[] = [];
    store.tx(function* () {
      bump(store, "n");
      store.afterCommit(() => seen.push("done"));
    });
    expect(seen).toEqual(["done"]);
    expect(store.durable()).toBeNull();
    expect(committedCounters(path)).toEqual({ n: 1 });
    expect((store.db.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous).toBe(1);
  });

  test("with batchBusyTurns, the first transaction of a turn commits at once and the later ones share one batch", async () => {
    const { store, path } = open("normal", true);
    const seen: string[] = [];
    bump(store, "first");
    expect(store.durable()).toBeNull(); // a lone call waits for nothing
    expect(committedCounters(path)).toEqual({ first: 1 });
    for (let i = 0; i < 5; i++) {
      store.tx(function* () {
        bump(store, "busy");
        store.afterCommit(() => seen.push(`granted ${i}`));
      });
    }
    const d = store.durable();
    expect(d).not.toBeNull();
    expect(seen).toEqual([]); // hand-offs are answered only after their commit
    expect(committedCounters(path)).toEqual({ first: 1 });
    await d;
    expect(committedCounters(path)).toEqual({ first: 1, busy: 5 });
    expect(seen).toEqual(["granted 0", "granted 1", "granted 2", "granted 3", "granted 4"]);
    // The next turn's first transaction commits at once again.
    bump(store, "next");
    expect(store.durable()).toBeNull();
    expect(committedCounters(path)).toEqual({ first: 1, busy: 5, next: 1 });
  });

  test("with batchBusyTurns, a failing transaction of a busy turn undoes only itself", async () => {
    const { store, path } = open("normal", true);
    bump(store, "a");
    bump(store, "b");
    expect(() =>
      store.tx(function* () {
        bump(store, "c");
        throw new Error("this call fails");
      }),
    ).toThrow("this call fails");
    bump(store, "d");
    await store.durable();
    expect(committedCounters(path)).toEqual({ a: 1, b: 1, d: 1 });
  });
});
