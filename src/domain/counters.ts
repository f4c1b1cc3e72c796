// Atomic counters: one UPSERT … RETURNING, so concurrent callers always get distinct values.
import { AirlockError } from "../errors.ts";
import { get, run, type Tx } from "../store/tx.ts";
import type { Ctx } from "./context.ts";
import type { Journal } from "./journal.ts";

export class Counters {
  constructor(
    private readonly c: Ctx,
    private readonly journal: Journal,
  ) {}

  async increment(name: string, by: number): Promise<number> {
    // A row body (docs/cluster.md, "Scaling out"): one atomic upsert of its own row and a
    // journal entry, nothing mirrored in memory, so daemons sharing a store run it side by side.
    return this.c.rowTx("counters", name, () => this.incrementTx(name, by));
  }

  private *incrementTx(name: string, by: number): Tx<number> {
    // One statement (on a shared store, one round trip): the row is created or moved in place.
    const next = (yield* get<{ value: number }>(
      "INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = counters.value + excluded.value RETURNING value",
      name,
      by,
    ))!.value;
    // JSON numbers are exact only up to 2^53; a counter that left that range would silently
    // hand out duplicate values, which is the one thing a counter must never do. Throwing
    // rolls the write back (both bounds are within 2^53, so the sum cannot overflow 64 bits).
    if (!Number.isSafeInteger(next)) {
      throw new AirlockError("invalid_argument", `counter ${name} would leave the exact integer range ±${Number.MAX_SAFE_INTEGER} (by ${by})`);
    }
    yield* this.journal.record("counter.changed", name, { data: { value: next, by } });
    return next;
  }

  async get(name: string): Promise<number> {
    return (await this.c.rowRead("counters", name, () => get<{ value: number }>("SELECT value FROM counters WHERE name = ?", name)))?.value ?? 0;
  }
}
