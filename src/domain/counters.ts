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
    return this.c.tx(() => this.incrementTx(name, by));
  }

  private *incrementTx(name: string, by: number): Tx<number> {
    const cur = yield* get<{ value: number }>("SELECT value FROM counters WHERE name = ?", name);
    const next = (cur?.value ?? 0) + by;
    // JSON numbers are exact only up to 2^53; a counter that left that range would
    // silently hand out duplicate values, which is the one thing a counter must never do.
    if (!Number.isSafeInteger(next)) {
      throw new AirlockError("invalid_argument", `counter ${name} would leave the exact integer range ±${Number.MAX_SAFE_INTEGER} (by ${by})`);
    }
    yield* run("INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value", name, next);
    yield* this.journal.record("counter.changed", name, { data: { value: next, by } });
    return next;
  }

  async get(name: string): Promise<number> {
    return (await this.c.read(() => get<{ value: number }>("SELECT value FROM counters WHERE name = ?", name)))?.value ?? 0;
  }
}
