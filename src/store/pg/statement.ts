// One statement a body yields, sent on the PostgreSQL store's connection (driver.ts): its text
// translated once (dialect.ts) and kept, the savepoint of a batch's body opened with its first
// statement in the same round trip, the writes bodies held (runLater) sent ahead of it, the
// tables it changed noted for the version, and its result turned back into the shape the
// domain's transactions read (../tx.ts), SQLite's shape; and a transaction's COMMIT, with the
// writes still held and the statement that goes with it. Everything goes with the extended
// protocol (send()), the only one Bun pipelines, each at the call, in order.
import { AirlockError } from "../../errors.ts";
import { mark, TRACING } from "../../trace.ts";
import type { RunResult, Stmt } from "../tx.ts";
import { type Connection, isConnectionError, type Link, outcomeUnknown, unavailable } from "./connection.ts";
import { type PgResult, rowsOf, type Translated, translate } from "./dialect.ts";
import { HeldFailed } from "./outcomes.ts";

/**
 * What one transaction being driven keeps while its statements run: the main connection's batch,
 * or a read beside it on the reader (readBeside). Its body's own code sees it as `current`.
 */
export interface Run {
  /** The connection it runs on (whose failure() judges a statement's error). */
  via: Connection;
  /**
   * In a batch of several bodies: whether the running body still has to open its savepoint
   * (with its first statement), and whether one is open already (a previous body's).
   */
  savepoint: { due: boolean; open: boolean } | null;
  /** The tables it changed (its version records them for the others). */
  written: Set<string>;
  /** A statement of the running body failed (the body may have caught it and gone on). */
  statementFailed: boolean;
  /** A batch of row bodies, or a read beside them: in the shared order. */
  shared: boolean;
  /** The writes held (runLater) on the main connection's transactions. */
  held: Held | null;
  /**
   * Reads sent with the BEGIN (readAhead), answered and not asked for yet, by aheadKey: a read
   * of the same text and values is answered from here, not sent. Dropped at the transaction's
   * first write (what they read may have moved) and once its catch-up ran.
   */
  ahead?: Map<string, unknown> | null;
  /**
   * A batch of row bodies on the main connection: how many bodies it runs, and how many have
   * sent their last statements (last()). When every one has, its COMMIT goes in the same
   * flight (`committing`: its answer, awaited instead of sending one).
   */
  lasts?: { bodies: number; sent: number; committing: Promise<PgResult | undefined> | null; flown?: () => void };
}

/**
 * A batch of row bodies commits in its flight (last()) only on a connection that answered a
 * COMMIT within this long: one idle longer may have died unseen (a firewall's idle timeout, a
 * server restart whose close is not read yet), and a batch that finds it dead at BEGIN runs
 * again on a new one only if its COMMIT was not in the flight (docs/cluster.md, "A row batch in
 * one flight").
 */
export const FLIGHT_FRESH_MS = 1000;

/** A statement's text and values, as one key (the reads ahead are by it). */
const aheadKey = (s: Stmt) => `${s.sql}\u0000${JSON.stringify(s.args)}`;

/**
 * BEGIN's statements and the reads ahead behind them, pipelined (one round trip): the answers
 * of BEGIN's statements, and the reads' by aheadKey. The server runs them in the order sent, so
 * the reads run with the order's lock held.
 */
export async function sendAhead(
  translations: Map<string, Translated>,
  l: Link,
  begin: readonly { text: string; args: readonly unknown[] }[],
  ahead: readonly Stmt[],
): Promise<{ results: unknown[]; ahead: Map<string, unknown> }> {
  if (TRACING) mark(`reads ahead ${ahead.length}`);
  const sent = [...begin.map((s) => send(l, s.text, s.args)), ...ahead.map((s) => send(l, translated(translations, s.sql).text, s.args))];
  const answers = await Promise.all(sent);
  return { results: answers.slice(0, begin.length), ahead: new Map(ahead.map((s, i) => [aheadKey(s), answers[begin.length + i]])) };
}

/**
 * Writes a body yielded with runLater, whose results nobody reads: each is sent ahead of the
 * transaction's next statement, whatever it is, or with its COMMIT, pipelined (never a round
 * trip of its own), so the server still runs every statement in the order the bodies wrote them.
 */
export interface Held {
  /** Not sent yet, in the order yielded. */
  later: Stmt[];
  /** Where the running body's own writes start in `later` (before it: earlier bodies'). */
  from: number;
  /** The answers of those sent: when one failed, the transaction is aborted (heldFailure). */
  sent: Promise<unknown>[];
}

/** Sends what is held (the first `upTo` of it), ahead of whatever is sent next. */
export function sendHeld(translations: Map<string, Translated>, l: Link, held: Held, upTo = held.later.length): void {
  if (upTo === 0) return;
  held.sent.push(...sendLater(translations, l, held.later.slice(0, upTo)));
  held.later = held.later.slice(upTo);
  held.from = Math.max(0, held.from - upTo);
}

/** The first failure among the held writes sent (all answered by the time a later statement's is). */
export async function heldFailure(held: Held | null): Promise<{ err: unknown } | null> {
  for (const p of held?.sent ?? []) {
    try {
      await p;
    } catch (err) {
      return { err };
    }
  }
  return null;
}

/** Savepoint texts: before a body's first statement (after the first body's, release it too). */
const SAVEPOINT = "SAVEPOINT body";
const RELEASE = "RELEASE SAVEPOINT body";
export const UNDO_BODY = "ROLLBACK TO SAVEPOINT body";

/** One statement's text as a template object (what a tagged template literal hands its tag). */
const templates = new Map<string, TemplateStringsArray>();
/** The texts are the driver's and the domain's, a bounded set; this bounds the map if not. */
const TEMPLATES_KEPT = 1000;

/**
 * One statement, sent now: its answer. Sent at the call, not when the answer is first awaited:
 * the server runs a connection's statements in the order they are sent, and a batch's row
 * bodies must reach it in key order (row-bodies.ts). Awaiting Bun's query sends it a
 * tick later than execute() does, so a statement awaited at once by one body went behind one
 * a later body sent with execute(), their row locks came in the other order, and two daemons
 * deadlocked (docs/cluster.md, "A row batch in one flight"). Every statement goes through here.
 *
 * With the extended protocol whether or not it has values, so it is pipelined behind whatever
 * is in flight on the connection. Bun's `unsafe` without values sends the simple protocol (it
 * allows several statements), and Bun 1.4.5 does not pipeline those: a simple query behind
 * another waits for it, and costs more than awaiting each in turn (docs/cluster.md, "Journal
 * entries held, and pipelined, really"). A tagged call is extended: the text is handed to the
 * tag as the template object a literal would be (frozen, `raw` not enumerable, as Bun checks),
 * one per text, kept.
 */
export function send<R = unknown>(l: Link, text: string, args?: readonly unknown[]): Promise<R> {
  return prepared(l, text, args).execute() as unknown as Promise<R>;
}

function prepared(l: Link, text: string, args?: readonly unknown[]) {
  if (args && args.length > 0) return l.conn.unsafe(text, args as unknown[]);
  let t = templates.get(text);
  if (!t) {
    if (templates.size >= TEMPLATES_KEPT) templates.clear();
    t = Object.freeze(Object.defineProperty([text], "raw", { value: Object.freeze([text]) })) as unknown as TemplateStringsArray;
    templates.set(text, t);
  }
  return l.conn(t);
}

/** Statements without values, sent one behind the other (pipelined): all their answers. */
export function sendAll(l: Link, texts: readonly string[]): Promise<unknown[]> {
  return Promise.all(texts.map((t) => send(l, t)));
}

function translated(translations: Map<string, Translated>, sql: string): Translated {
  let t = translations.get(sql);
  if (!t) {
    t = translate(sql);
    translations.set(sql, t);
  }
  return t;
}

/** An INSERT of one row of placeholders, which several of can join into one statement. */
const ONE_ROW = /^(\s*INSERT\s+INTO\s+[a-z_][a-z0-9_]*\s*\([^)]*\)\s*VALUES\s*)(\(\s*\?(?:\s*,\s*\?)*\s*\))\s*$/i;
/** The most rows one joined INSERT carries (a body may hold many: a note per expired key). */
export const JOINED_ROWS = 64;

/**
 * Held writes (runLater) as statements to send, in the order they were held: each run of
 * one-row INSERTs of the same statement joined into one INSERT of all their rows, up to
 * JOINED_ROWS (the journal's entries of a batch of row bodies: one statement, not one per
 * body); anything else as it was.
 */
export function joinHeld(later: readonly Stmt[]): { sql: string; args: Stmt["args"] }[] {
  const out: { sql: string; args: Stmt["args"] }[] = [];
  for (let i = 0; i < later.length; ) {
    const first = later[i]!;
    const one = ONE_ROW.exec(first.sql);
    let j = i + 1;
    if (one) while (j < later.length && j - i < JOINED_ROWS && later[j]!.sql === first.sql) j++;
    const group = later.slice(i, j);
    out.push({ sql: group.length === 1 ? first.sql : `${one![1]}${group.map(() => one![2]).join(", ")}`, args: group.flatMap((s) => s.args) });
    i = j;
  }
  return out;
}

/**
 * Sends held writes (joinHeld), pipelined: the promises of their answers, each already guarded
 * against an unhandled rejection (heldFailure reads them).
 */
function sendLater(translations: Map<string, Translated>, l: Link, later: readonly Stmt[]): Promise<unknown>[] {
  return joinHeld(later).map(({ sql, args }) => {
    const sent = send(l, translated(translations, sql).text, args);
    sent.catch(() => undefined);
    return sent;
  });
}

/** Sends one yielded statement (or a gather of reads, pipelined) and answers its result in SQLite's shape. */
export async function execStatement(translations: Map<string, Translated>, l: Link, run: Run, stmt: Stmt): Promise<unknown> {
  // A gather: each statement sent as this loop reaches it (the first opening the savepoint,
  // if one is due), all before any answer is awaited; the server runs them in the order sent.
  if (stmt.reads) return Promise.all(stmt.reads.map((r) => execStatement(translations, l, run, r)));
  if (stmt.last) return execLast(translations, l, run, stmt);
  const t = translated(translations, stmt.sql);
  // Held: a write that inserts a row always changes one.
  if (stmt.later && run.held) {
    run.ahead = null;
    run.held.later.push(stmt);
    run.written.add(t.table ?? "*");
    return undefined;
  }
  const key = run.ahead && stmt.mode !== "run" && !t.writes ? aheadKey(stmt) : undefined;
  const read = key === undefined ? undefined : run.ahead!.get(key);
  if (read !== undefined) {
    run.ahead!.delete(key!);
    if (TRACING) mark("read ahead");
    return shaped(stmt, t, read as PgResult);
  }
  // A body of a batch opens its savepoint with its first statement, in the same round trip.
  // What earlier bodies held goes ahead of it (out of this body's undo), this body's after it.
  const sp = run.savepoint;
  let opening: Promise<unknown> | undefined;
  if (sp?.due) {
    if (run.held) sendHeld(translations, l, run.held, run.held.from);
    const released = sp.open ? send(l, RELEASE) : null;
    const opened = send(l, SAVEPOINT);
    opening = released ? Promise.all([released, opened]) : opened;
    sp.due = false;
    sp.open = true;
  }
  if (run.held) sendHeld(translations, l, run.held);
  let result: PgResult;
  try {
    result = await send<PgResult>(l, stmt.mode === "run" ? t.runText : t.text, stmt.args);
  } catch (err) {
    run.statementFailed = true;
    await opening?.catch(() => undefined);
    throw err;
  }
  if (opening) await opening;
  // Only a statement that changed rows moves the shared version (a DELETE that found nothing
  // must not send every other daemon to catch up, and them back to this one).
  if ((stmt.mode === "run" || t.writes) && (result.affectedRows ?? result.length) > 0) {
    run.written.add(t.table ?? "*");
    run.ahead = null;
  }
  return shaped(stmt, t, result);
}

/**
 * A body's last statement (last()) and the writes its row gives, as one statement (a WITH of
 * them: `r` is the statement's row); when every body of a batch of row bodies has sent its
 * last, the COMMIT goes in the same flight (docs/cluster.md, "A row batch in one flight"). Held
 * writes go ahead of it. In a batch of line bodies (savepoints) it runs as any statement would.
 */
async function execLast(translations: Map<string, Translated>, l: Link, run: Run, stmt: Stmt): Promise<unknown> {
  const then = stmt.last!.then;
  const own = translated(translations, stmt.sql);
  const one = then.length === 0 ? stmt : { sql: withText(stmt.sql, then), args: [...stmt.args, ...then.flatMap((w) => w.args)], mode: stmt.mode };
  run.ahead = null; // it writes: what was read ahead may have moved
  if (run.savepoint) {
    const row = await execStatement(translations, l, run, { ...one, last: undefined });
    if (row) wroteLast(run, own, then);
    return row;
  }
  if (run.held) sendHeld(translations, l, run.held);
  const sent = send<PgResult>(l, translated(translations, one.sql).text, one.args);
  const lasts = run.lasts;
  if (lasts && ++lasts.sent === lasts.bodies) {
    if (TRACING) mark(`commit in flight ${lasts.bodies}`);
    lasts.committing = commit(translations, run.via, l, run);
    lasts.committing.catch(() => undefined); // the driver awaits it
    lasts.flown?.(); // the whole transaction is on its way: the connection may take the next (driver.ts)
  }
  let result: PgResult;
  try {
    result = await sent;
  } catch (err) {
    run.statementFailed = true;
    throw err;
  }
  if (result.length > 0) wroteLast(run, own, then);
  return rowsOf(result, 1)[0] ?? null;
}

/**
 * A last() and its writes as one statement's text: `r` is the statement's row. Made at each
 * call: the translation of the text is kept (translated), and keeping the text as well showed
 * nothing measurable.
 */
function withText(sql: string, then: readonly { into: string; select: string }[]): string {
  return `WITH r AS (${sql})${then.map((w, i) => `, w${i} AS (INSERT INTO ${w.into} SELECT ${w.select} FROM r)`).join("")} SELECT * FROM r`;
}

/**
 * The tables a last() that returned its row changed (the shared version and the journal's word
 * read them): none of its own when it is a read (a look whose answer ends its body).
 */
function wroteLast(run: Run, own: Translated, then: readonly { into: string }[]): void {
  if (own.writes) run.written.add(own.table ?? "*");
  for (const w of then) run.written.add(/^\s*([a-z_][a-z0-9_]*)/i.exec(w.into)?.[1]?.toLowerCase() ?? "*");
}

/** A statement's result in SQLite's shape, as its mode asks. */
function shaped(stmt: Stmt, t: Translated, result: PgResult): unknown {
  if (stmt.mode === "all") return rowsOf(result);
  if (stmt.mode === "get") return rowsOf(result, 1)[0] ?? null;
  const lastInsertRowid = t.returnsRevision ? Number(rowsOf(result, 1)[0]?.revision) : 0;
  return { changes: result.affectedRows ?? 0, lastInsertRowid } satisfies RunResult;
}

/**
 * A transaction's COMMIT (driver.ts), after `before` (one statement) in the same round trip: the
 * results of `before`, if any. A failure of `before` leaves the transaction aborted and COMMIT
 * answers ROLLBACK. The writes still held (runLater) are sent first. All with the extended
 * protocol, pipelined. A connection lost before COMMIT was sent: unavailable (rolled back);
 * lost while it was on its way: the outcome is unknown.
 */
export async function commit(translations: Map<string, Translated>, conn: Connection, l: Link, run: Run, before?: { text: string; args: readonly unknown[] }): Promise<PgResult | undefined> {
  // Lost before COMMIT was sent: the server rolls back, the outcome is known.
  if (l.lost) throw unavailable();
  if (run.held) sendHeld(translations, l, run.held);
  const first = before === undefined ? null : send<PgResult>(l, before.text, before.args);
  first?.catch(() => undefined);
  let committed: PgResult;
  try {
    committed = await send<PgResult>(l, "COMMIT");
  } catch (err) {
    if (!isConnectionError(err)) throw err;
    conn.lose(l, err);
    throw outcomeUnknown();
  }
  // PostgreSQL answers COMMIT of a failed transaction with ROLLBACK, not an error: a held
  // write or `before` failed (their own errors say why), or a body caught a statement's error
  // and went on.
  if (committed.command === "ROLLBACK") {
    const held = await heldFailure(run.held);
    if (held) throw new HeldFailed(held.err, []);
    await first;
    throw new AirlockError("internal", "the transaction rolled back: a statement in it failed and the body went on");
  }
  return first ? await first : undefined;
}
