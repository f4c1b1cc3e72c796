// Atomic counters: one UPSERT … RETURNING, so concurrent callers always get distinct values.
import { AirlockError } from "../errors.ts";
import { get, type Tx } from "../store/tx.ts";
import type { Ctx } from "./context.ts";
import type { Journal } from "./journal.ts";

/** The row created or moved in place, in one statement. */
const UPSERT = "INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = counters.value + excluded.value RETURNING value";

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
    // One statement and its journal entry, whose value the row it returns gives: a batch of
    // counters on a shared store commits in the flight that carries them (last(),
    // docs/cluster.md, "A row batch in one flight"), so a hot counter's row is locked for the
    // server's work alone.
    const entry = { data: `'{"value":' || value || ?`, args: [`,"by":${JSON.stringify(by)}}`] };
    try {
      return (yield* this.journal.lastRecorded<{ value: number }>("counter.changed", name, entry, {}, UPSERT, name, by))!.value;
    } catch (err) {
      // JSON numbers are exact only up to 2^53; a counter that left that range would silently
      // hand out duplicate values, which is the one thing a counter must never do. The schema
      // refuses such a value (counters_exact), which rolls the write back; the sum of two values
      // within 2^53 cannot overflow 64 bits.
      if (err instanceof Error && err.message.includes("counters_exact")) {
        throw new AirlockError("invalid_argument", `counter ${name} would leave the exact integer range ±${Number.MAX_SAFE_INTEGER} (by ${by})`);
      }
      throw err;
    }
  }

  async get(name: string): Promise<number> {
    return (await this.c.rowRead("counters", name, () => get<{ value: number }>("SELECT value FROM counters WHERE name = ?", name)))?.value ?? 0;
  }
}
