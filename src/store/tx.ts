// A transaction body is a generator: it *yields* each statement and receives its result, and a
// store's driver runs it. The domain is written once against this shape; only the driver knows
// whether a statement is answered at once (SQLite, synchronous: the whole body runs in one go,
// with no event-loop turn in the middle, exactly as plain synchronous code) or after a round
// trip (a networked store). See docs/cluster.md.
//
// Rule: a generator called without `yield*` does nothing at all. `bun .ci/check-tx.ts` (part of
// `npm run typecheck` and CI) fails on any call whose Tx result is dropped.
import type { SQLQueryBindings } from "bun:sqlite";

export type { SQLQueryBindings };

export type StmtMode = "get" | "all" | "run";

/** A condition a statement includes (`WHERE ... AND <sql>`), and the values of its placeholders, in order. */
export interface Condition {
  sql: string;
  args: SQLQueryBindings[];
}

/** One statement for the driver: its SQL, its bound values, and which result is wanted. */
export interface Stmt {
  sql: string;
  args: SQLQueryBindings[];
  mode: StmtMode;
  /**
   * A gather (gather()): these statements, none depending on another's result, sent together;
   * the answer is their results in order, and `sql` and `args` are empty.
   */
  reads?: readonly Stmt[];
  /**
   * A write whose result the body never reads (runLater()): a networked store may hold it and
   * send it ahead of the transaction's next statement or its COMMIT; SQLite runs it at once.
   */
  later?: true;
  /**
   * The body's last statement (last()): its first row is the answer, and `then` are writes whose
   * values that row gives; the body sends nothing after them.
   */
  last?: { then: readonly FromReturned[] };
}

/** A statement made to be gathered (reading.all), typed by its result. */
export interface Read<R> extends Stmt {
  readonly result?: R;
}

/** Statements for gather(): the same as all(), not yet sent. */
export const reading = {
  all: <R>(sql: string, ...args: SQLQueryBindings[]): Read<R[]> => ({ sql, args, mode: "all" }),
};

type Results<T extends readonly Read<unknown>[]> = { -readonly [K in keyof T]: T[K] extends Read<infer R> ? R : never };

/**
 * Statements none of which needs another's result, answered together: a networked store sends
 * them all before it waits for the first answer, so they cost one round trip's wait instead of
 * one each (the status snapshot's reads); SQLite answers them one after the other. Their
 * results, in the order given.
 */
export function* gather<T extends readonly Read<unknown>[]>(...reads: T): Tx<Results<T>> {
  if (answerNow) {
    const answer = answerNow;
    return reads.map((r) => answer(r.mode, r.sql, r.args)) as Results<T>;
  }
  return (yield { sql: "", args: [], mode: "all", reads }) as Results<T>;
}

export interface RunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

/** A transaction body (or a part of one) that returns T. */
export type Tx<T = void> = Generator<Stmt, T, unknown>;

// While a synchronous driver runs a body, a statement is answered right where it is written,
// instead of being yielded up through every generator between it and the driver (a hand-off
// is seven frames deep: each yield would pass through all of them). Same order, same results;
// an error is thrown at the statement, as a yielded one would be.
/** How a synchronous driver answers one statement. */
export type Answer = (mode: StmtMode, sql: string, args: SQLQueryBindings[]) => unknown;

let answerNow: Answer | null = null;

/** The first row, or null. */
export function* get<R>(sql: string, ...args: SQLQueryBindings[]): Tx<R | null> {
  return (answerNow ? answerNow("get", sql, args) : yield { sql, args, mode: "get" }) as R | null;
}

/** Every row. */
export function* all<R>(sql: string, ...args: SQLQueryBindings[]): Tx<R[]> {
  return (answerNow ? answerNow("all", sql, args) : yield { sql, args, mode: "all" }) as R[];
}

/** A statement for its effect: how many rows changed, and the rowid of the last insert. */
export function* run(sql: string, ...args: SQLQueryBindings[]): Tx<RunResult> {
  return (answerNow ? answerNow("run", sql, args) : yield { sql, args, mode: "run" }) as RunResult;
}

/**
 * A write whose result nobody reads, which must commit with the transaction: SQLite runs it at
 * once; PostgreSQL holds it and sends it ahead of the transaction's next statement, or with its
 * COMMIT, never in a round trip of its own (the same one-row INSERT of several bodies sent
 * together is joined into one: pg/statement.ts). Every later statement still sees it, since it is
 * sent before them. The journal's entry of a change (Journal.record) is one.
 */
export function* runLater(sql: string, ...args: SQLQueryBindings[]): Tx<void> {
  if (answerNow) answerNow("run", sql, args);
  else yield { sql, args, mode: "run", later: true };
}

/**
 * A write whose values the row a body's last statement returned gives (last()):
 * `INSERT INTO <into> SELECT <select>`, where `select` names that row's columns (those of its
 * RETURNING) and holds placeholders for `args`.
 */
export interface FromReturned {
  /** The table and its columns: "journal (at, kind, resource, agent_id, reason, data)". */
  into: string;
  select: string;
  args: SQLQueryBindings[];
}

/**
 * A body's last statement (docs/cluster.md, "A row batch in one flight"): `sql`, whose first row
 * is answered, and the writes `then` whose values that row gives (a journal entry of the value a
 * counter's upsert returned). The body sends nothing after them, and its code after them only
 * shapes its answer: it must not throw (a refusal is the statement's own error, a constraint of
 * the schema, thrown here). So a batch of row bodies that all end this way may be committed in
 * the same flight as their statements, and the rows they lock are held for the server's work
 * alone, not for a round trip back to the daemon. PostgreSQL runs the statement and its writes
 * as one (a WITH of them); SQLite runs them one after the other, the writes reading the row as
 * values bound (nothing is written when the statement returned no row).
 */
export function* last<R>(then: readonly FromReturned[], sql: string, ...args: SQLQueryBindings[]): Tx<R | null> {
  if (!answerNow) return (yield { sql, args, mode: "get", last: { then } }) as R | null;
  const row = answerNow("get", sql, args) as Record<string, SQLQueryBindings> | null;
  if (row) {
    const columns = Object.keys(row);
    const from = `(SELECT ${columns.map((c) => `? AS ${c}`).join(", ")})`;
    for (const t of then) answerNow("run", `INSERT INTO ${t.into} SELECT ${t.select} FROM ${from}`, [...t.args, ...columns.map((c) => row[c] ?? null)]);
  }
  return row as R | null;
}

/** A body with no statement in it, for code that must hand a Tx where nothing needs the store. */
export function* pure<T>(value: T): Tx<T> {
  return value;
}

/**
 * Runs a body to its end, answering each statement at once (SQLite's driver). A
 * statement that throws is thrown into the body at its yield, so the body's own try/finally runs.
 */
export function runNow<T>(body: Tx<T>, answer: Answer): T {
  const outer = answerNow;
  answerNow = answer;
  try {
    let step = body.next();
    // Only a statement made by hand (not by get/all/run) still arrives here.
    while (!step.done) {
      let result: unknown;
      try {
        const st = step.value;
        result = st.reads ? st.reads.map((r) => answer(r.mode, r.sql, r.args)) : answer(st.mode, st.sql, st.args);
      } catch (err) {
        step = body.throw(err);
        continue;
      }
      step = body.next(result);
    }
    return step.value;
  } finally {
    answerNow = outer;
  }
}
