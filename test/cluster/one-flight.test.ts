// A row batch in one flight (docs/cluster.md): a batch of counters on a shared store is sent with
// its journal entries and its COMMIT together, so a hot counter's row is locked for the server's
// work alone. The batch still hands out every value once, records each with its own value, and a
// counter the schema refuses (past the exact integer range) fails alone: the others of its batch
// commit, once. Skipped without a server (AIRLOCK_TEST_PG).
import { expect, setDefaultTimeout, test } from "bun:test";
import { withTracedPair } from "../helpers/cluster.ts";
import type { DaemonProcess } from "../helpers/daemon.ts";
import { describePg } from "../helpers/pg.ts";

setDefaultTimeout(60_000);

const CLIENTS = 16;
const ROUNDS = 10;

type Change = { kind: string; resource: string; value?: number; by?: number; revision: number };

/** Every counter.changed entry of the journal after `since`, read on `d` page by page. */
async function counterChanges(d: DaemonProcess, since = 0): Promise<Change[]> {
  const out: Change[] = [];
  for (let from = since; ; ) {
    const w = await d.call("watch_changes", { since_revision: from, kinds: ["counter.changed"], limit: 500 });
    out.push(...(w.changes as Change[]));
    if (w.changes.length === 0 || w.revision === from) return out;
    from = w.revision as number;
  }
}

describePg("a row batch in one flight", () => {
  test("clients of two daemons share a hot counter: every value once, each recorded with its own value, and batches commit in their flight", async () => {
    const { value, labels } = await withTracedPair(async (d1, d2) => {
      const from = Date.now();
      const got = await Promise.all(
        Array.from({ length: CLIENTS }, async (_, c) => {
          const d = c % 2 === 0 ? d1 : d2;
          const values: number[] = [];
          for (let r = 0; r < ROUNDS; r++) {
            const a = await d.call("increment_counter", { name: "flight-hot", by: 1 });
            const b = await d.call("increment_counter", { name: `flight-own-${c}`, by: 2 });
            expect(b.value).toBe(2 * (r + 1));
            values.push(a.value as number);
          }
          return values;
        }),
      );
      return { from, to: Date.now(), values: got.flat(), changes: await counterChanges(d2) };
    });
    const n = CLIENTS * ROUNDS;
    expect([...value.values].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    // The entries of the hot counter: one per increment, each with the value it handed out, in
    // the order of the journal (a row's lock orders the writes, and each entry is written in its
    // writer's transaction right after the row).
    const hot = value.changes.filter((e) => e.resource === "flight-hot");
    expect(hot.map((e) => [e.value, e.by])).toEqual(Array.from({ length: n }, (_, i) => [i + 1, 1]));
    for (let c = 0; c < CLIENTS; c++) {
      expect(value.changes.filter((e) => e.resource === `flight-own-${c}`).map((e) => e.value)).toEqual(Array.from({ length: ROUNDS }, (_, r) => 2 * (r + 1)));
    }
    // The traced daemon's batches of counters were committed in their flight (its eight clients
    // call side by side, so some batches hold several), and none was committed another way.
    const flights = labels(value.from, value.to).filter((l) => l.startsWith("commit in flight "));
    expect(flights.length).toBeGreaterThan(0);
    expect(flights.some((l) => Number(l.slice("commit in flight ".length)) > 1)).toBe(true);
  });

  test("a counter the schema refuses fails alone: the others of its batch commit once, and it is unchanged", async () => {
    const { value, labels } = await withTracedPair(async (d1, d2) => {
      expect((await d2.call("increment_counter", { name: "flight-edge", by: Number.MAX_SAFE_INTEGER })).value).toBe(Number.MAX_SAFE_INTEGER);
      const from = Date.now();
      const rounds: { refused: string; others: number[] }[] = [];
      for (let r = 0; r < 5; r++) {
        // Asked for together, so they run in one batch or a few: the refused one among them.
        const calls = Array.from({ length: 8 }, (_, c) => d2.call("increment_counter", { name: c === 3 ? "flight-edge" : `flight-ok-${c}` }));
        const answers = await Promise.all(calls);
        const refused = answers[3]!;
        expect(refused.isError).toBe(true);
        rounds.push({ refused: JSON.stringify(refused), others: answers.filter((_, c) => c !== 3).map((a) => a.value as number) });
      }
      const edge = await d1.call("increment_counter", { name: "flight-edge", by: 0 });
      return { from, to: Date.now(), rounds, edge: edge.value as number, changes: await counterChanges(d1) };
    });
    // A batch that held the refused one was run again without it: a flight of k bodies right
    // after one of k + 1 (five rounds of seven side by side: the refused one was batched in some).
    const flights = labels(value.from, value.to)
      .filter((l) => l.startsWith("commit in flight "))
      .map((l) => Number(l.slice("commit in flight ".length)));
    expect(flights.some((k, i) => i > 0 && flights[i - 1] === k + 1)).toBe(true);
    for (const [r, round] of value.rounds.entries()) {
      expect(round.refused).toContain("exact integer range");
      expect(round.others).toEqual(Array.from({ length: 7 }, () => r + 1));
    }
    expect(value.edge).toBe(Number.MAX_SAFE_INTEGER);
    // Each counter recorded once per increment that committed, and the refused ones not at all.
    expect(value.changes.filter((e) => e.resource === "flight-edge").map((e) => e.value)).toEqual([Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]);
    for (const c of [0, 1, 2, 4, 5, 6, 7]) expect(value.changes.filter((e) => e.resource === `flight-ok-${c}`).map((e) => e.value)).toEqual([1, 2, 3, 4, 5]);
  });
});
