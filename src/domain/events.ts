// Generation-counted events. A waiter passes the generation it last saw and returns as soon as
// the stored generation is strictly greater, so a signal between two calls is never missed.
// A signal wakes every waiter (broadcast); clear resets to 0 and wakes them without firing.
// On a shared store an event nobody waits for is a row: a signal or clear then runs as a row
// body (docs/cluster.md, "Scaling out"), beside other daemons' calls, and a read of the
// generation too; only a line to wake needs the line body.
import { all, type Condition, get, run, type Tx } from "../store/tx.ts";
import type { Ctx } from "./context.ts";
import type { Journal } from "./journal.ts";
import type { WaitQueue } from "./wait.ts";
import type { Outcome } from "./waiter.ts";

export interface EventState {
  generation: number;
  fired: boolean;
}

export class Events {
  // Event waiters carry no wake_token: a returned waiter simply calls again with its generation.
  readonly waits: WaitQueue<{ lastSeen: number }, EventState>;

  constructor(
    private readonly c: Ctx,
    private readonly journal: Journal,
  ) {
    this.waits = c.waitQueue("event", 0);
  }

  async signal(name: string): Promise<number> {
    const tried = this.c.rowIfNobody(this.waits, "events", name, (nobody) => this.fireAlone(name, nobody));
    return (tried && (await tried)) ?? this.c.tx(() => this.signalTx(name));
  }

  /**
   * A signal with nobody in the event's line, as a row body: the generation moves on only if no
   * stored place stands in its line, a condition of its one upsert, the body's last statement,
   * whose entry takes the generation from the row (docs/cluster.md, "A row batch in one
   * flight"). Null: someone waits, and the line body wakes them.
   */
  private *fireAlone(name: string, nobody: Condition): Tx<number | null> {
    // The same text as fire's entry: {"generation":N}.
    const entry = { data: `'{"generation":' || generation || ?`, args: ["}"] };
    const sql = `INSERT INTO events (name, generation) SELECT ?, 1 WHERE ${nobody.sql} ${NEXT_GENERATION} RETURNING generation`;
    return (yield* this.journal.lastRecorded<{ generation: number }>("event.signaled", name, entry, {}, sql, name, ...nobody.args))?.generation ?? null;
  }

  /** The generation moved on, and journalled: all a signal does when nobody waits. */
  private *fire(name: string): Tx<number> {
    const row = yield* get<{ generation: number }>(`INSERT INTO events (name, generation) VALUES (?, 1) ${NEXT_GENERATION} RETURNING generation`, name);
    const generation = row!.generation;
    yield* this.journal.record("event.signaled", name, { data: { generation } });
    return generation;
  }

  private *signalTx(name: string): Tx<number> {
    const generation = yield* this.fire(name);
    for (const w of [...this.waits.line(name)]) {
      if (generation > w.req.lastSeen) this.waits.grant(w, { generation, fired: true });
    }
    return generation;
  }

  async clear(name: string): Promise<void> {
    const tried = this.c.rowIfNobody(this.waits, "events", name, (nobody) => this.resetAlone(name, nobody));
    if (!(tried && (await tried))) await this.c.tx(() => this.clearTx(name));
  }

  /**
   * A clear with nobody in the event's line, as a row body: the row deleted only if no stored
   * place stands in its line, and whether none did answered by the same statement (its row
   * locked first, in key order). Null: someone waits, and the line body wakes them.
   */
  private *resetAlone(name: string, nobody: Condition): Tx<true | null> {
    const sql = `WITH d AS (DELETE FROM events WHERE name = ? AND ${nobody.sql}) SELECT 1 AS nobody WHERE ${nobody.sql}`;
    if (!(yield* get<{ nobody: number }>(sql, name, ...nobody.args, ...nobody.args))) return null;
    yield* this.journal.record("event.cleared", name);
    return true;
  }

  /** The generation back to 0, and journalled: all a clear does when nobody waits. */
  private *reset(name: string): Tx<true> {
    yield* run("DELETE FROM events WHERE name = ?", name);
    yield* this.journal.record("event.cleared", name);
    return true;
  }

  private *clearTx(name: string): Tx<void> {
    yield* this.reset(name);
    for (const w of [...this.waits.line(name)]) this.waits.grant(w, { generation: 0, fired: false });
  }

  async generation(name: string): Promise<number> {
    return this.c.rowRead("events", name, () => this.generationTx(name));
  }

  private *generationTx(name: string): Tx<number> {
    return (yield* get<{ generation: number }>("SELECT generation FROM events WHERE name = ?", name))?.generation ?? 0;
  }

  async wait(name: string, lastSeen: number, waitMs: number, signal?: AbortSignal): Promise<EventState> {
    if (waitMs <= 0) {
      // A look, not a wait: the row alone answers it.
      const generation = await this.generation(name);
      return { generation, fired: generation > lastSeen };
    }
    const self = this;
    const first = await this.c.tx(function* (): Tx<{ done: EventState } | { blocked: Promise<Outcome<EventState>> }> {
      const generation = yield* self.generationTx(name);
      if (generation > lastSeen) return { done: { generation, fired: true } };
      return { blocked: self.waits.block(self.waits.enqueue(name, { lastSeen }), self.c.clock.now() + waitMs, signal) };
    });
    if ("done" in first) return first.done;
    const outcome = await first.blocked;
    if (outcome.kind === "granted") return outcome.value;
    const generation = await this.generation(name);
    return { generation, fired: generation > lastSeen };
  }

  async list(): Promise<{ name: string; generation: number; waiters: number }[]> {
    const self = this;
    return this.c.readLines(function* () {
      const rows = yield* all<{ name: string; generation: number }>("SELECT name, generation FROM events ORDER BY name");
      return rows.map((r) => ({ ...r, waiters: self.waits.line(r.name).length }));
    });
  }
}

/** A signal of an event already stored: its generation up by one (a new one starts at 1). */
const NEXT_GENERATION = "ON CONFLICT(name) DO UPDATE SET generation = events.generation + 1";
