// The PostgreSQL store's driver (docs/cluster.md): the domain's transaction bodies (../tx.ts)
// run unchanged; this driver awaits each statement they yield on one connection, and runs the
// bodies strictly one after another, so a transaction never sees another's statements in the
// middle of its own (the same guarantee SQLite's driver gives by running a body in one go).
// Unlike SQLite's, a tx() called from inside a body does not join it: it waits its turn behind
// it (bodies compose with yield*, not with nested tx()). On a shared store every transaction
// also runs the cluster version protocol (src/domain/cluster-sync.ts) around its body.
//
// Group commit (issue 21): the bodies asked for while a transaction runs wait for it, and then
// run together in the next one (line bodies asked for while its BEGIN waits join it: joinWaiting),
// each in a savepoint of its own (opened with its first statement, in the same round trip), so
// a body that fails undoes only itself, as SQLite's batches do (db.ts). A batch pays one BEGIN,
// one catch-up, one flush of the lines, one version bump and one COMMIT (its fsync) for all its
// bodies; each is answered after that COMMIT. A lone body runs alone, with no savepoint.
//
// Row bodies (store.ts, RowBody; docs/cluster.md, "Scaling out"): a batch made only of them
// takes the global order shared, so it overlaps other daemons' batches of row bodies, commit
// included; it runs them in the order of their keys (their row locks then come in one order on
// every daemon), waits for no BEGIN, reads no version, catches nothing up, flushes no lines and
// bumps no version (onRowsCommitted, after a COMMIT that wrote the journal). Bodies run side by
// side, their statements pipelined on the connection (row-bodies.ts), and have no savepoints: one
// that fails is answered with its error, the transaction rolls back, and the others run again
// in the next (so a row body may run more than once before it commits).
//
// A write a body holds (runLater: a journal entry, a claim's row) is not waited for: it goes
// ahead of the next statement or with the COMMIT (statement.ts), and one that fails aborts the
// transaction: a batch of row bodies then runs each body again alone, line bodies share its fate.
//
// When other daemons were seen to write what a catch-up reads, a transaction in the global
// order sends those reads behind its BEGIN, in the same round trip (VersionProtocol.readAhead;
// docs/cluster.md, "Deltas read with the BEGIN"), and its catch-up finds them answered.
//
// Reads beside row bodies (readBeside: the status snapshot, the list tools that show lines) run
// on a second connection, the reader, in the shared order too, so a long one holds none of the
// main connection's batches; they read memory, so they wait for this daemon's transaction in the
// global order that may be changing it, and are read again if one was granted while they ran.
import { AirlockError } from "../../errors.ts";
import { mark, TRACING } from "../../trace.ts";
import type { Tx } from "../tx.ts";
import { type Connection, isConflict, isConnectionError, type Link, outcomeUnknown } from "./connection.ts";
import type { PgResult, Translated } from "./dialect.ts";
import { commit, execStatement, FLIGHT_FRESH_MS, heldFailure, type Run, send, sendAhead, sendAll, UNDO_BODY } from "./statement.ts";
import type { RowBody, VersionProtocol } from "../store.ts";
import { Flight, Flights } from "./flights.ts";
import { sideBySide } from "./row-bodies.ts";
import { answerCommitted, type Begun, Failed, HeldFailed, type Hook, type Job, Overlapped } from "./outcomes.ts";

/**
 * The most bodies one transaction runs. PostgreSQL keeps up to 64 subtransaction ids per
 * backend before every snapshot on the server gets slower (a savepoint that wrote is one).
 */
export const MAX_BATCH = 32;

/** How many times a batch of row bodies PostgreSQL ended to break a deadlock runs again before its bodies hear the error. */
const CONFLICT_RETRIES = 3;

export class PgDriver {
  private readonly translations = new Map<string, Translated>();
  /** The main connection's link that last answered a COMMIT, and when (FLIGHT_FRESH_MS). */
  private answered: { link: Link; at: number } | null = null;
  /** The end of the queue of bodies. */
  private tail: Promise<unknown> = Promise.resolve();
  private closedFlag = false;
  // Hooks of the transaction whose body is executing right now, and that transaction. Only set
  // while the body's own code runs (between two statements other code runs too, and its
  // afterCommit is not ours).
  private pending: Hook[] | null = null;
  private current: Run | null = null;
  /** The bodies waiting for the next transaction (null: none yet; the next tx() queues one). */
  private next: Job[] | null = null;
  /** How many pieces of work were chained so far, and the place of `next`'s batch among them (joinWaiting). */
  private chained = 0;
  private nextAt = 0;
  /** The connection of the reads beside row bodies (readBeside), when there is one. */
  reader: Connection | null = null;
  /** The end of the queue of those reads. */
  private readerTail: Promise<unknown> = Promise.resolve();
  /**
   * Moves each time a transaction of this daemon in the global order is granted the order (from
   * then on it may change memory); `mutating` until that transaction and its hooks are done.
   */
  private exclusiveEpoch = 0;
  private mutating: Promise<void> | null = null;
  private endMutating: (() => void) | null = null;
  /** Set when other daemons share the store (attach): the version protocol every transaction runs. */
  sync: VersionProtocol | null = null;
  /** After a batch of row bodies that wrote the journal committed (peers.ts: tell the others). */
  onRowsCommitted: () => void = () => undefined;
  /** Batches of row bodies whose flight freed the connection before its answer (flights.ts). */
  private readonly flights = new Flights();

  constructor(
    private readonly conn: Connection,
    private readonly path: string,
  ) {
    conn.onReconnect = () => this.sync?.unknown();
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  /**
   * Runs work on the connection in its turn: after everything asked for before it, transactions
   * included (so the batch being gathered closes: a body asked for later runs after this).
   */
  enqueue<T>(job: () => Promise<T>): Promise<T> {
    this.next = null;
    return this.chain(async () => {
      await this.flights.landed();
      return job();
    });
  }

  private chain<T>(job: () => Promise<T>): Promise<T> {
    if (this.closedFlag) return Promise.reject(new AirlockError("unavailable", `store ${this.path} is closed`));
    const run = this.tail.then(job);
    this.tail = run.catch(() => undefined);
    this.chained++;
    return run;
  }

  /** The body runs in the next transaction, with every other asked for meanwhile (up to MAX_BATCH). */
  tx<T>(fn: () => Tx<T>, rows?: RowBody): Promise<T> {
    if (this.closedFlag) return Promise.reject(new AirlockError("unavailable", `store ${this.path} is closed`));
    const answer = new Promise<T>((resolve, reject) => {
      let jobs = this.next;
      if (!jobs) {
        const queued: Job[] = (jobs = this.next = []);
        const at = (this.nextAt = this.chained + 1); // its place in the chain
        void this.chain(async () => {
          const gathering = this.flights.gathering(queued.length);
          if (gathering) await gathering;
          if (this.next === queued) this.next = null;
          // Freed early when its flight carries its COMMIT and flights are slow (flights.ts).
          return this.flights.chained((free) => this.runBatch(queued, false, at, 0, free));
        });
      }
      jobs.push({ fn, resolve: resolve as (value: unknown) => void, reject, rows });
      if (jobs.length >= MAX_BATCH) this.next = null;
    });
    // As a queued promise is: its failure is the caller's to see, not an unhandled rejection
    // while the caller is still busy elsewhere.
    answer.catch(() => undefined);
    return answer;
  }

  /**
   * A body outside any transaction. On a shared store a read takes its turn in the global order
   * too: what it shows (lines included) is current, and a catch-up it triggers may write.
   */
  read<T>(body: Tx<T>, rows?: RowBody): Promise<T> {
    if (this.sync) return this.tx(() => body, rows);
    return this.enqueue(async () => this.drive(await this.conn.ready(), this.outside(), body, null));
  }

  /**
   * A read in the shared order on a connection of its own (docs/cluster.md, "Reads beside row
   * bodies on a connection of their own"), so a long one (the status snapshot: a dozen statements) never holds this
   * daemon's batches of row bodies, which keep running on the main connection meanwhile. It may
   * read memory: no transaction of this daemon in the global order is running when it starts
   * (it waits for one to end), none can be granted the order while it holds it shared, and if one
   * was granted while it ran (this daemon's, ended just before its BEGIN was answered) it is read
   * again. It writes nothing. Without a reader, or with the reader unreachable, it is `read`.
   */
  async readBeside<T>(fn: () => Tx<T>, rows: RowBody): Promise<T> {
    const reader = this.reader;
    if (!reader || !this.sync) return this.read(fn(), rows);
    if (this.closedFlag) throw new AirlockError("unavailable", `store ${this.path} is closed`);
    const turn = this.readerTail.then(() => this.besideOnce(reader, this.sync!, fn, rows));
    this.readerTail = turn.catch(() => undefined);
    const answer = await turn;
    return answer.read ? answer.value : this.read(fn(), rows);
  }

  /** One read beside row bodies; not read (`read: false`) when memory may have moved under it or the reader failed. */
  private async besideOnce<T>(reader: Connection, sync: VersionProtocol, fn: () => Tx<T>, rows: RowBody): Promise<{ read: true; value: T } | { read: false }> {
    while (this.mutating) await this.mutating;
    const epoch = this.exclusiveEpoch;
    let l: Link;
    try {
      l = await reader.ready();
    } catch {
      return { read: false }; // the main connection says whether the store is reachable
    }
    if (TRACING) mark("order shared (reader)");
    const run: Run = { via: reader, savepoint: null, written: new Set(), statementFailed: false, shared: true, held: null };
    const hooks: Hook[] = [];
    let value: T;
    try {
      await sendAll(l, sync.beginRows());
      if (rows.fresh && rows.fresh.length > 0) await this.drive(l, run, sync.hooks.freshen(rows.fresh), hooks);
      value = await this.drive(l, run, this.step(run, hooks, fn), hooks);
      if (run.written.size > 0) throw new AirlockError("internal", "a read beside row bodies wrote rows");
      if (this.exclusiveEpoch !== epoch) throw new Overlapped();
      await l.conn.unsafe("COMMIT");
    } catch (err) {
      if (!l.lost) await l.conn.unsafe("ROLLBACK").catch((e: unknown) => reader.failure(l, e));
      for (const h of hooks) h.orElse?.();
      if (err instanceof Overlapped || l.lost) return { read: false };
      throw err;
    }
    for (const h of hooks) h.done();
    return { read: true, value };
  }

  afterCommit(done: () => void, orElse?: () => void): void {
    if (this.pending) this.pending.push({ done, orElse });
    else done();
  }

  /** Refuses new bodies and lets the queued ones finish. */
  async drain(): Promise<void> {
    this.closedFlag = true;
    await Promise.all([this.tail, this.readerTail]);
    await this.flights.landed();
  }

  /** The state of a body run outside any transaction (a read on a store nobody shares). */
  private outside(): Run {
    return { via: this.conn, savepoint: null, written: new Set(), statementFailed: false, shared: false, held: null };
  }

  /** One transaction with one body, for a caller already in the queue (a catch-up of its own). */
  runTx<T>(fn: () => Tx<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => void this.runBatch([{ fn, resolve: resolve as (value: unknown) => void, reject }]));
  }

  /**
   * One transaction: BEGIN, the catch-up if others committed, the bodies (each in a savepoint
   * when there are several), the flush, COMMIT; then each body's hooks, and its answer.
   */
  private async runBatch(given: readonly Job[], retried = false, at?: number, conflicts = 0, free?: () => void): Promise<void> {
    if (given.length === 0) return; // each joined the transaction before it (joinWaiting)
    const rows = this.sync !== null && given.every((j) => j.rows);
    // Only a batch of row bodies goes behind a flight still on its way (flights.ts).
    if (!rows) await this.flights.landed();
    // Stable: bodies of one key keep the order they were asked in.
    const jobs = rows && given.length > 1 ? [...given].sort((a, b) => (a.rows!.key < b.rows!.key ? -1 : a.rows!.key > b.rows!.key ? 1 : 0)) : given;
    try {
      let opened: Begun;
      try {
        opened = await this.begin(rows);
      } catch (err) {
        for (const j of jobs) j.reject(err);
        return;
      }
      await this.runOpened(rows || at === undefined ? jobs : [...jobs, ...this.joinWaiting(MAX_BATCH - jobs.length, at)], rows, opened, retried, conflicts, free);
    } finally {
      this.endMutating?.();
    }
  }

  /**
   * Granted the global order: the line bodies asked for while its BEGIN waited (a round trip, and
   * other daemons' turns), at the head of the batch gathering right behind this one (at `at` in
   * the chain: nothing chained between), join this transaction (up to `room`; the first row body
   * and those after it stay, so nothing overtakes what was asked before it). A turn then carries
   * what gathered meanwhile, not another turn.
   */
  private joinWaiting(room: number, at: number): Job[] {
    const next = this.nextAt === at + 1 ? this.next : null;
    let n = 0;
    while (next && n < next.length && n < room && !next[n]!.rows) n++;
    return n === 0 ? [] : next!.splice(0, n);
  }

  /** runBatch, once its BEGIN answered (or, for row bodies, was sent). */
  private async runOpened(jobs: readonly Job[], rows: boolean, opened: Begun, retried: boolean, conflicts: number, free?: () => void): Promise<void> {
    const { l, changed } = opened;
    const flight = new Flight(this.flights, free);
    // What runs again once its flight freed the connection goes behind what the chain holds
    // now: never on this connection beside another batch's statements.
    const again = async (js: readonly Job[], retriedAgain = false, conflictsAgain = 0): Promise<void> => {
      const rerun = () => this.runBatch(js, retriedAgain, undefined, conflictsAgain);
      if (flight.freed) void this.chain(rerun);
      else await rerun();
    };
    let version = opened.version;
    const shared: Hook[] = []; // the catch-up's and the flush's
    const done: { job: Job; out: unknown; hooks: Hook[] }[] = [];
    let undone = false; // a body of several failed and was undone: memory may hold what it did
    // Row bodies need no savepoints: they change nothing in memory, so when one fails the batch
    // rolls back and runs again without it (a savepoint would cost each a query more).
    const run: Run = {
      via: this.conn,
      savepoint: jobs.length > 1 && !rows ? { due: true, open: false } : null,
      written: new Set(),
      statementFailed: false,
      shared: rows,
      // The journal's entries go ahead of the next statement or with the COMMIT: no round trip.
      held: { later: [], from: 0, sent: [] },
      lasts: rows && this.answered?.link === l && performance.now() - this.answered.at < FLIGHT_FRESH_MS ? { bodies: jobs.length, sent: 0, committing: null, flown: flight.flown } : undefined,
      ahead: opened.ahead ?? null,
    };
    try {
      if (this.sync && !rows && (version !== this.sync.seen || opened.due)) await this.drive(l, run, this.sync.hooks.catchUp(changed, opened.rows), shared);
      run.ahead = null; // read for the catch-up alone
      // Row bodies that read mirrors: those brought up to the rows once for the batch.
      const fresh = rows ? [...new Set(jobs.flatMap((j) => j.rows!.fresh ?? []))] : [];
      if (fresh.length > 0) await this.drive(l, run, this.sync!.hooks.freshen(fresh), shared);
      if (rows && jobs.length > 1) await sideBySide(l, run, jobs, done, (job, hooks) => this.drive(l, run, this.step(run, hooks, job.fn), hooks));
      else for (const job of jobs) {
        const hooks: Hook[] = [];
        if (run.savepoint) run.savepoint.due = true;
        run.statementFailed = false;
        run.held!.from = run.held!.later.length;
        try {
          const out = await this.drive(l, run, this.step(run, hooks, job.fn), hooks);
          if (run.statementFailed && run.savepoint) {
            throw new AirlockError("internal", "the transaction rolled back: a statement in it failed and the body went on");
          }
          done.push({ job, out, hooks });
        } catch (err) {
          // A held write that failed aborted the transaction: it is every body's failure.
          const held = l.lost ? null : await heldFailure(run.held);
          if (held) throw new HeldFailed(held.err, hooks);
          // Alone, the body's failure is the transaction's (below). In a batch it undoes only itself.
          if (rows && jobs.length > 1 && !l.lost) throw new Failed(err, hooks, job);
          if (!run.savepoint || l.lost) throw new Failed(err, hooks);
          if (!run.savepoint.due) await send(l, UNDO_BODY);
          run.held!.later.length = run.held!.from; // what it held and did not send yet
          for (const h of hooks) h.orElse?.();
          job.reject(err);
          undone = true;
        }
      }
      // A transaction that changed rows on a shared store moves the version and notifies, with
      // its COMMIT (one round trip).
      run.savepoint = null;
      const sync = rows ? null : this.sync;
      const flushed = sync ? await this.drive(l, run, sync.hooks.flush(), shared) : false;
      if (opened.began) await opened.began; // a row batch's BEGIN: COMMIT only inside it
      // Sent already when every body of a row batch ended with last() (statement.ts, execLast).
      const committing = run.lasts?.committing;
      const bumped = committing ? await committing : await commit(this.translations, this.conn, l, run, sync?.bump(run.written, flushed));
      flight.answered();
      if (bumped) version = sync!.bumped(bumped);
      this.answered = { link: l, at: performance.now() };
    } catch (thrown) {
      run.savepoint = null;
      let err = thrown instanceof Failed ? thrown.reason : thrown;
      // Its COMMIT went in the flight with its statements (last()).
      const committing = run.lasts?.committing;
      if (committing && (await committing.then(() => true, () => false))) {
        // Committed, and a body failed after its last statement, which last() forbids: nothing
        // is undone or run again; its caller hears that it committed.
        this.onRowsCommitted();
        return answerCommitted(jobs, done, thrown, err);
      }
      // A row batch's BEGIN that failed: its failure is the batch's (the bodies' came after it).
      // With the COMMIT in the same flight, a connection lost may have run all of it first.
      const beginFailed = opened.began ? await opened.began.then(() => undefined, (e: unknown) => ({ e })) : undefined;
      const lostWithCommit = !!committing && beginFailed !== undefined && isConnectionError(beginFailed.e);
      if (beginFailed) err = lostWithCommit ? (this.conn.failure(l, beginFailed.e), outcomeUnknown()) : this.conn.failure(l, beginFailed.e);
      // A COMMIT sent ended the transaction, committed or not (and the next batch may be on the
      // connection behind it, when it freed the connection): nothing to roll back.
      if (!l.lost && !committing) await l.conn.unsafe("ROLLBACK").catch((e: unknown) => this.conn.failure(l, e));
      const hooks = [...done.flatMap((d) => d.hooks), ...(thrown instanceof Failed ? thrown.hooks : []), ...shared];
      for (const h of hooks) h.orElse?.();
      if (!rows) this.sync?.failed(); // row bodies left memory alone
      if (beginFailed && isConnectionError(beginFailed.e) && !retried && !lostWithCommit) {
        // Dead before the batch did anything (its BEGIN found it so): it runs once more on a new
        // connection, as a waited BEGIN is retried (begin): a restart between calls costs no error.
        // Not when its COMMIT went with it: the server may have run the whole flight before the
        // connection went, and running it again would apply it twice (docs/cluster.md).
        return again(jobs, true);
      }
      if (rows && !l.lost && isConflict(err) && conflicts < CONFLICT_RETRIES) {
        // PostgreSQL ended this batch of row bodies to break a deadlock with another daemon's
        // (row locks in key order hold only as far as each body locks with its first statement;
        // no body known now reads before it writes: this is the defence). Nothing of it
        // committed, and row bodies change nothing in memory before their commit: all of it runs again.
        if (TRACING) mark("deadlock: the row batch runs again");
        return again(jobs, retried, conflicts + 1);
      }
      if (thrown instanceof HeldFailed && rows && jobs.length > 1 && !l.lost) {
        // A held write of a row body failed, and which body's is not known: each runs again
        // alone, and only the one whose write fails is answered with its error. (Line bodies
        // share the transaction's fate, below: they are not run twice.)
        for (const j of jobs) await again([j]);
        return;
      }
      const culprit = thrown instanceof Failed ? thrown.job : undefined;
      if (culprit && !l.lost) {
        // A row body of several failed: it alone is answered with its error; the others run
        // again, in a transaction of their own (they changed nothing but rows, now rolled back).
        culprit.reject(err);
        return again(jobs.filter((j) => j !== culprit));
      }
      // Every body of the transaction shares its fate: the one that failed it gets its own
      // error, the others (done or not yet run) get it too, since nothing of theirs committed.
      for (const j of jobs) j.reject(err);
      return;
    }
    if (rows) {
      if (run.written.has("journal")) this.onRowsCommitted();
    } else if (this.sync) {
      this.sync.seen = version;
      // What the undone body changed in memory (the lines, a cache) went into this flush, as
      // SQLite keeps it; the next transaction rereads everything, so memory is the rows again.
      if (undone) this.sync.unknown();
    }
    for (const h of shared) h.done();
    for (const { job, out, hooks } of done) {
      for (const h of hooks) h.done();
      job.resolve(out);
    }
  }

  /** Runs one step of a body's own code, with hooks (or none) as the afterCommit list. */
  private step<R>(run: Run | null, hooks: Hook[] | null, f: () => R): R {
    this.pending = hooks;
    this.current = run;
    try {
      return f();
    } finally {
      this.pending = null;
      this.current = null;
    }
  }

  /** Whether the body running now is in the shared order (a row body, or a read beside them). */
  get inSharedOrder(): boolean {
    return this.current?.shared ?? false;
  }

  /** Drives a body to its end: each yielded statement is awaited and its result sent back. */
  private async drive<T>(l: Link, run: Run, body: Tx<T>, hooks: Hook[] | null): Promise<T> {
    let next = this.step(run, hooks, () => body.next());
    let ended = false; // its last() was sent: nothing may follow (its batch may be committing)
    while (!next.done) {
      if (ended) throw new AirlockError("internal", "a statement after a body's last (last() must end it)");
      ended = next.value.last !== undefined;
      let result: unknown;
      try {
        result = await execStatement(this.translations, l, run, next.value);
      } catch (err) {
        // Lost with its COMMIT on the way (last()): whether it committed is not known.
        const thrown = run.lasts?.committing && isConnectionError(err) ? (run.via.failure(l, err), outcomeUnknown()) : run.via.failure(l, err);
        next = this.step(run, hooks, () => body.throw(thrown)); // so the body's own try/finally runs
        continue;
      }
      next = this.step(run, hooks, () => body.next(result));
    }
    return next.value;
  }

  /** BEGIN on a live connection. A connection found dead here had done nothing for this call
   *  yet, so it is replaced once, silently: a server restart between two calls costs no error. */
  private async begin(rows: boolean): Promise<Begun> {
    if (rows) {
      // Not waited for: the bodies' statements go right behind it, run in the order sent (the
      // order's lock first); runOpened waits for it before COMMIT, and runs the batch again when
      // it found the connection dead. A BEGIN fails only with its connection.
      if (TRACING) mark("order shared");
      const l = await this.conn.ready();
      const began = sendAll(l, this.sync!.beginRows());
      began.catch(() => undefined); // read by runOpened
      return { l, version: -1, changed: null, began };
    }
    // On a shared store, in the same round trip: the global order's lock and the version, and
    // the reads a catch-up of what others were seen to write would start with (extended then).
    const sync = this.sync;
    const text = sync ? sync.beginText() : "BEGIN";
    const ahead = sync ? sync.readAhead() : [];
    // Which order each transaction takes (bench/trace.ts; a test counts a daemon's exclusive turns).
    if (TRACING) mark("order exclusive");
    for (let attempt = 0; ; attempt++) {
      const l = await this.conn.ready();
      try {
        if (!sync) {
          await l.conn.unsafe(text);
          return { l, version: -1, changed: null };
        }
        const answered = ahead.length === 0 ? { results: await l.conn.unsafe(text) } : await sendAhead(this.translations, l, sync.beginStatements(), ahead);
        // Granted the order: from here until its hooks ran, this transaction may change memory
        // (the version protocol's flags first), so the reads beside row bodies wait for it, and
        // one that it overlapped is read again (readBeside).
        this.exclusiveEpoch++;
        this.mutating = new Promise((resolve) => {
          this.endMutating = () => {
            this.mutating = this.endMutating = null;
            resolve();
          };
        });
        return { l, ...sync.opened(answered.results), ...("ahead" in answered ? { ahead: answered.ahead } : {}) };
      } catch (err) {
        const thrown = this.conn.failure(l, err);
        if (thrown instanceof AirlockError && attempt === 0) continue;
        if (!l.lost) await l.conn.unsafe("ROLLBACK").catch(() => undefined);
        throw thrown;
      }
    }
  }
}
