// The PostgreSQL store's driver (docs/cluster.md): the domain's transaction bodies (../tx.ts)
// run unchanged; this driver awaits each statement they yield on one connection, and runs the
// bodies strictly one after another, so a transaction never sees another's statements in the
// middle of its own (the same guarantee SQLite's driver gives by running a body in one go).
// Unlike SQLite's, a tx() called from inside a body does not join it: it waits its turn behind
// it (bodies compose with yield*, not with nested tx()). On a shared store every transaction
// also runs the cluster version protocol (src/domain/cluster-sync.ts) around its body.
import { AirlockError } from "../../errors.ts";
import type { RunResult, Stmt, Tx } from "../tx.ts";
import { type Connection, isConnectionError, type Link, outcomeUnknown, unavailable } from "./connection.ts";
import { type PgResult, rowsOf, type Translated, translate } from "./dialect.ts";
import type { Opened, VersionProtocol } from "../store.ts";

type Hook = { done: () => void; orElse?: (() => void) | undefined };

export class PgDriver {
  private readonly translations = new Map<string, Translated>();
  /** The end of the queue of bodies. */
  private tail: Promise<unknown> = Promise.resolve();
  private closedFlag = false;
  // Hooks of the transaction whose body is executing right now. Only set while the body's own
  // code runs (between two statements other code runs too, and its afterCommit is not ours).
  private pending: Hook[] | null = null;
  /** The tables the running transaction changed (its version records them for the others). */
  private written = new Set<string>();
  /** Set when other daemons share the store (attach): the version protocol every transaction runs. */
  sync: VersionProtocol | null = null;

  constructor(
    private readonly conn: Connection,
    private readonly path: string,
  ) {
    conn.onReconnect = () => this.sync?.unknown();
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  /** Runs bodies one at a time, in the order they were asked for. */
  enqueue<T>(job: () => Promise<T>): Promise<T> {
    if (this.closedFlag) return Promise.reject(new AirlockError("unavailable", `store ${this.path} is closed`));
    const run = this.tail.then(job);
    this.tail = run.catch(() => undefined);
    return run;
  }

  tx<T>(fn: () => Tx<T>): Promise<T> {
    return this.enqueue(() => this.runTx(fn));
  }

  /**
   * A body outside any transaction. On a shared store a read takes its turn in the global order
   * too: what it shows (lines included) is current, and a catch-up it triggers may write.
   */
  read<T>(body: Tx<T>): Promise<T> {
    return this.enqueue(async () => (this.sync ? this.runTx(() => body) : this.drive(await this.conn.ready(), body, null)));
  }

  afterCommit(done: () => void, orElse?: () => void): void {
    if (this.pending) this.pending.push({ done, orElse });
    else done();
  }

  /** Refuses new bodies and lets the queued ones finish. */
  async drain(): Promise<void> {
    this.closedFlag = true;
    await this.tail;
  }

  /** One transaction: BEGIN, the catch-up if others committed, the body, the flush, COMMIT. */
  async runTx<T>(fn: () => Tx<T>): Promise<T> {
    const { l, version: found, changed } = await this.begin();
    const hooks: Hook[] = [];
    let out: T;
    let version = found;
    try {
      this.written = new Set();
      if (this.sync && version !== this.sync.seen) await this.drive(l, this.sync.hooks.catchUp(changed), hooks);
      out = await this.drive(l, this.step(hooks, fn), hooks);
      // A transaction that changed rows on a shared store moves the version and notifies, with
      // its COMMIT (one round trip).
      const flushed = this.sync ? await this.drive(l, this.sync.hooks.flush(), hooks) : false;
      const bumped = await this.commit(l, this.sync?.bumpText(this.written, flushed));
      if (bumped) version = this.sync!.bumped(bumped);
    } catch (err) {
      if (!l.lost) await l.conn.unsafe("ROLLBACK").catch((e: unknown) => this.conn.failure(l, e));
      for (const h of hooks) h.orElse?.();
      this.sync?.failed();
      throw err;
    }
    if (this.sync) this.sync.seen = version;
    for (const h of hooks) h.done();
    return out;
  }

  private async exec(l: Link, stmt: Stmt): Promise<unknown> {
    let t = this.translations.get(stmt.sql);
    if (!t) {
      t = translate(stmt.sql);
      this.translations.set(stmt.sql, t);
    }
    const result = (await l.conn.unsafe(stmt.mode === "run" ? t.runText : t.text, stmt.args)) as PgResult;
    // Only a statement that changed rows moves the shared version (a DELETE that found nothing
    // must not send every other daemon to catch up, and them back to this one).
    if ((stmt.mode === "run" || t.writes) && (result.affectedRows ?? result.length) > 0) this.written.add(t.table ?? "*");
    if (stmt.mode === "all") return rowsOf(result);
    if (stmt.mode === "get") return rowsOf(result, 1)[0] ?? null;
    const lastInsertRowid = t.returnsRevision ? Number(rowsOf(result, 1)[0]?.revision) : 0;
    return { changes: result.affectedRows ?? 0, lastInsertRowid } satisfies RunResult;
  }

  /** Runs one step of a body's own code, with hooks (or none) as the afterCommit list. */
  private step<R>(hooks: Hook[] | null, f: () => R): R {
    this.pending = hooks;
    try {
      return f();
    } finally {
      this.pending = null;
    }
  }

  /** Drives a body to its end: each yielded statement is awaited and its result sent back. */
  private async drive<T>(l: Link, body: Tx<T>, hooks: Hook[] | null): Promise<T> {
    let next = this.step(hooks, () => body.next());
    while (!next.done) {
      let result: unknown;
      try {
        result = await this.exec(l, next.value);
      } catch (err) {
        const thrown = this.conn.failure(l, err);
        next = this.step(hooks, () => body.throw(thrown)); // so the body's own try/finally runs
        continue;
      }
      next = this.step(hooks, () => body.next(result));
    }
    return next.value;
  }

  /** BEGIN on a live connection. A connection found dead here had done nothing for this call
   *  yet, so it is replaced once, silently: a server restart between two calls costs no error. */
  private async begin(): Promise<Opened & { l: Link }> {
    // On a shared store, in the same round trip: the global order's lock and the version.
    const sync = this.sync;
    const text = sync ? sync.beginText() : "BEGIN";
    for (let attempt = 0; ; attempt++) {
      const l = await this.conn.ready();
      try {
        if (!sync) {
          await l.conn.unsafe(text);
          return { l, version: -1, changed: null };
        }
        return { l, ...sync.opened(await l.conn.unsafe(text)) };
      } catch (err) {
        const thrown = this.conn.failure(l, err);
        if (thrown instanceof AirlockError && attempt === 0) continue;
        if (!l.lost) await l.conn.unsafe("ROLLBACK").catch(() => undefined);
        throw thrown;
      }
    }
  }

  /**
   * COMMIT, after `before` (one statement) in the same round trip: the results of `before`, if
   * any. A failure of `before` leaves the transaction aborted and COMMIT answers ROLLBACK.
   */
  private async commit(l: Link, before?: string): Promise<PgResult | undefined> {
    // Lost before COMMIT was sent: the server rolls back, the outcome is known.
    if (l.lost) throw unavailable();
    let results: PgResult[];
    try {
      results = before === undefined ? [(await l.conn.unsafe("COMMIT")) as PgResult] : ((await l.conn.unsafe(`${before}; COMMIT`)) as unknown as PgResult[]);
    } catch (err) {
      if (!isConnectionError(err)) throw err;
      this.conn.lose(l, err);
      throw outcomeUnknown();
    }
    // PostgreSQL answers COMMIT of a failed transaction with ROLLBACK, not an error: a body
    // caught a statement's error and went on.
    if (results[results.length - 1]!.command === "ROLLBACK") {
      throw new AirlockError("internal", "the transaction rolled back: a statement in it failed and the body went on");
    }
    return before === undefined ? undefined : results[0];
  }
}
