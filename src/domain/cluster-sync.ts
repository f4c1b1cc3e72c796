// The cluster version protocol (docs/cluster.md, "What each daemon keeps in memory"): how a
// daemon on a shared store learns that others committed since it last looked, and what they
// touched. Every transaction takes the global order's lock first; a version row
// (`airlock_sync`) moves with every transaction that changed a row, and each version records
// the tables it changed (`airlock_changes`, the newest thousand). It lives here, beside the
// cluster it serves (cluster.ts: what to reread for a set of tables, the lines, the grants),
// and the store's driver runs it through the `VersionProtocol` it declares
// (src/store/store.ts): the driver sends BEGIN, the lock and the version read in one round
// trip, and the bump, its NOTIFY and COMMIT in another, so the texts are made here and sent
// there.
import type { ClusterHooks, Opened, RowVersions, VersionProtocol } from "../store/store.ts";
import { all, type Read, reading, type Stmt, type Tx } from "../store/tx.ts";

/** Every transaction of every daemon takes this lock first: one global order (docs/cluster.md). */
export const ORDER_LOCK = "7019267304284449570";
/**
 * The channel every daemon hears: a transaction in the global order that wrote what may answer
 * a call blocked elsewhere notifies on it, so that daemon catches up now rather than on its next
 * call (docs/cluster.md, "Who hears a NOTIFY").
 */
const CHANNEL = "airlock";
/** The channel of recorded changes alone, heard only by daemons with a change-feed watcher. */
const JOURNAL_CHANNEL = "airlock_journal";
/**
 * What a call blocked on another daemon may be answered by: a grant another daemon made it
 * (`grants`), its place taken away (`waiters`; OWN_WAITERS is not), a daemon's coming or going
 * (`daemons`), or "*" (not known).
 */
const ANSWERING: readonly string[] = ["grants", "waiters", "daemons", "*"];
/**
 * A NOTIFY's payload is "<daemon> <what>": "journal" from row bodies that recorded changes (no
 * version moved), or this prefix and the tables a transaction in the global order wrote, comma
 * separated ("*": not known; OWN_WAITERS for "waiters" when only its own places changed), so a
 * daemon with a call blocked catches up at once only when what was written may answer it
 * (peers.ts). A daemon of an earlier release sent "<daemon>" alone.
 */
const TABLES_NOTICE = "tables:";
/**
 * After the tables, when what they name may answer a call blocked elsewhere but only on some
 * daemons (a grant, places of theirs written), " to:" and those daemons, comma separated: any
 * other daemon catches it up at its next transaction, not now. Without it, every daemon that has
 * a call blocked may be answered (a daemon coming or going, tables not known, a daemon of an
 * earlier release, which reads the first two words alone).
 */
const TO_NOTICE = "to:";
/** The longest list of daemons a NOTIFY names (its payload may hold 8,000 bytes): past it, every daemon hears it as its own. */
const TO_LONGEST = 2_000;
/** Between CHANNEL and a daemon's id: the channel only that daemon hears (ownChannel). */
const OWN_CHANNEL = "_to_";
/** In a NOTIFY's tables, for "waiters" when only the writer's own places changed (not a table). */
const OWN_WAITERS = "own_waiters";
/** How many versions keep their record of tables; a daemon further behind rereads everything. */
const CHANGES_KEPT = 1000;
/** How many row versions keep the keys of deleted rows (airlock_gone); a daemon further behind reads its tables whole. */
const GONE_KEPT = 100_000;

const ROWS_BEGIN = ["BEGIN", `SELECT pg_advisory_xact_lock_shared(${ORDER_LOCK})`] as const;
/** beginText's first two statements, as statements of their own (beginStatements). */
const EXCLUSIVE_BEGIN = [
  { text: "BEGIN", args: [] },
  { text: `SELECT pg_advisory_xact_lock(${ORDER_LOCK})`, args: [] },
] as const;

export class VersionSync implements VersionProtocol {
  readonly channel = CHANNEL;
  readonly journalChannel = JOURNAL_CHANNEL;
  hearingOwn: ReadonlySet<string> = new Set();
  /** The version of the shared state this daemon last saw; -1: unknown, the next transaction catches up in full. */
  seen = -1;
  journalMoved = false;
  /** The daemons' liveness moved since the last transaction in the global order (livenessMoved). */
  private daemonsMoved = false;
  /**
   * The tables whose catch-up reads go with the next BEGIN in the global order (readAhead): those
   * another daemon's NOTIFY named since, and those the last catch-up found changed (who wrote
   * them once is likely to again: then the reads go ahead even when its NOTIFY is late).
   */
  private ahead = new Set<string>();

  constructor(
    /** What every transaction does besides its body (cluster.ts). */
    readonly hooks: ClusterHooks,
    /** The NOTIFY's payload, so a daemon does not wake itself. */
    private readonly daemonId: string,
  ) {}

  ownChannel(daemon: string): string {
    return `${CHANNEL}${OWN_CHANNEL}${daemon}`;
  }

  answers(tables: readonly string[]): boolean {
    return tables.some((t) => ANSWERING.includes(t));
  }

  tablesIn(what: string | undefined): string[] | null {
    return what?.startsWith(TABLES_NOTICE) ? what.slice(TABLES_NOTICE.length).split(",") : null;
  }

  /** The daemons a NOTIFY's third word names (TO_NOTICE); null: every daemon it may concern. */
  targetsIn(to: string | undefined): string[] | null {
    return to?.startsWith(TO_NOTICE) ? to.slice(TO_NOTICE.length).split(",") : null;
  }

  /** Where this daemon stood is not known any more (a reconnect). */
  unknown(): void {
    this.seen = -1;
  }

  /**
   * The daemons' liveness moved: the next catch-up names `daemons`, so the lines judge every
   * place again and each cache reads its delta (the rows another daemon's row bodies stamped,
   * which no version named: a lock a daemon that died took with nobody in line). It used to
   * forget where this daemon stood, so every daemon reread every table whole whenever any
   * daemon came or went (docs/cluster.md, "A daemon coming or going").
   */
  livenessMoved(): void {
    this.daemonsMoved = true;
  }

  /** The daemons' liveness moved and no transaction in the global order has judged the lines again yet. */
  get livenessPending(): boolean {
    return this.daemonsMoved;
  }

  /** A transaction failed: memory may be ahead of the rows now, so reread them all. */
  failed(): void {
    this.seen = -1;
    this.hooks.forget();
  }

  /**
   * BEGIN, the global order's lock, then (a statement of its own, so its snapshot is taken with
   * the lock held) what the others committed since this daemon last looked: the version, and
   * the tables those versions changed. Its third result is the row `opened` reads.
   */
  beginText(): string {
    return `BEGIN; SELECT pg_advisory_xact_lock(${ORDER_LOCK}); ${standingText(this.seen)}`;
  }

  beginStatements(): readonly { text: string; args: readonly unknown[] }[] {
    return [...EXCLUSIVE_BEGIN, { text: STANDING_FROM_PARAMETER, args: [Math.max(0, this.seen)] }];
  }

  readAhead(): readonly Stmt[] {
    if (this.daemonsMoved) this.ahead.add("daemons"); // the catch-up names it too (opened)
    if (this.ahead.size === 0) return [];
    const tables = this.ahead;
    this.ahead = new Set();
    return this.seen < 0 ? [] : this.hooks.readAhead(tables);
  }

  wrote(tables: readonly string[]): void {
    for (const t of tables) this.ahead.add(t);
  }

  /**
   * A batch of row bodies (docs/cluster.md, "Scaling out") takes the order shared: it overlaps
   * other daemons' row bodies and excludes every other transaction. It reads no version: its
   * bodies read nothing a catch-up would change. Two statements, sent extended: the driver
   * pipelines them with the bodies' first statements (nothing waits for their answer).
   */
  beginRows(): readonly string[] {
    return ROWS_BEGIN;
  }

  opened(results: unknown): Opened {
    const { version, changed, rows } = standingOf((results as StandingRow[][])[2]![0]!, this.seen);
    // Row bodies' journal entries move no version: the journal is caught up because they said
    // so; and the daemons' liveness moves none either.
    const due = this.journalMoved || this.daemonsMoved;
    if (this.journalMoved && changed) changed.add("journal");
    if (this.daemonsMoved && changed) changed.add("daemons");
    // Who wrote these is likely to again (liveness is judged now: not carried).
    if (version !== this.seen && changed) this.wrote([...changed].filter((t) => t !== "daemons"));
    this.journalMoved = false;
    this.daemonsMoved = false;
    return { version, changed, due, rows };
  }

  /**
   * The statement sent with COMMIT when the transaction changed rows (or the domain's flush
   * wrote): it moves the version, records the tables it changed (names from our own SQL: [a-z_*]
   * only), trims the oldest records, and notifies the daemons that need to hear it, if any (a
   * NOTIFY is delivered only if it commits). Its result is what `bumped` reads. Undefined when
   * nothing changed. Its one value is the NOTIFY's list of daemons (TO_NOTICE), or "".
   */
  bump(written: ReadonlySet<string>, flushed: boolean): { text: string; args: unknown[] } | undefined {
    if (!flushed && written.size === 0) return undefined;
    // Sorted: one text per set of tables, not per order they were written in (each text is a
    // statement the connection prepares); the daemons it names are its value, not its text.
    const named = [...written].filter((t) => /^([a-z_]+|\*)$/.test(t)).sort();
    const tables = named.join(",");
    const concerned = [...this.hooks.concernedDaemons()].filter((d) => d !== this.daemonId);
    // Only this daemon's own places in line changed: no call blocked elsewhere is answered by it.
    const own = named.includes("waiters") && concerned.length === 0;
    const noticed = named.length === 0 ? ["*"] : own ? named.map((t) => (t === "waiters" ? OWN_WAITERS : t)) : named;
    // Whom it may answer: the daemons it wrote places or grants of (the rest catch it up at
    // their next transaction), unless a daemon came or went or the tables are not known (all).
    // (A list too long for a payload, or a name that is not one of ours, goes to all as well.)
    const toText = ` ${TO_NOTICE}${concerned.join(",")}`;
    const some = !noticed.includes("daemons") && !noticed.includes("*") && toText.length <= TO_LONGEST && concerned.every((d) => /^[A-Za-z0-9_-]+$/.test(d));
    // Who needs to hear it: the daemons it may answer a call blocked on; only those watching the
    // change feed when it recorded changes and answers nobody; else nobody (a daemon's next
    // transaction finds the version moved and catches up then).
    const answers = this.answers(noticed) && (!some || concerned.length > 0);
    const payload = `'${this.daemonId} ${TABLES_NOTICE}${noticed.join(",")}' || $1::text`;
    // Named daemons that all hear their own channel are told there, each alone: the others are
    // not woken at all (a daemon of an earlier release hears only the channel everyone hears).
    const alone = answers && some && concerned.every((d) => this.hearingOwn.has(d));
    const channel = answers ? CHANNEL : noticed.includes("journal") ? JOURNAL_CHANNEL : null;
    const notify = alone
      ? `, (SELECT count(pg_notify('${CHANNEL}${OWN_CHANNEL}' || d, ${payload})) FROM unnest(string_to_array($2::text, ',')) d)`
      : channel
        ? `, pg_notify('${channel}', ${payload})`
        : "";
    const args = alone ? [toText, concerned.join(",")] : channel ? [answers && some ? toText : ""] : [];
    // The keys of deleted rows are kept for GONE_KEPT row versions; gone_floor moves with the
    // trim, and a daemon that applied less than that reads its tables whole (cluster.ts).
    // gone_xfloor: the newest writer's id among the keys trimmed, for the deltas by horizon
    // (mirror.ts, horizonReads): the keys the trim takes are those at or below the new floor.
    const floor = `GREATEST(gone_floor, (SELECT last_value FROM airlock_row_ver) - ${GONE_KEPT})`;
    const text =
      `WITH b AS (UPDATE airlock_sync SET version = version + 1, gone_floor = ${floor}, ` +
      `gone_xfloor = GREATEST(gone_xfloor, (SELECT max(wxid) FROM airlock_gone WHERE ver <= ${floor})) WHERE id = 1 RETURNING version, gone_floor), ` +
      `c AS (INSERT INTO airlock_changes (version, tables) SELECT version, '${tables || "*"}' FROM b), ` +
      `d AS (DELETE FROM airlock_changes WHERE version <= (SELECT version FROM b) - ${CHANGES_KEPT}), ` +
      `g AS (DELETE FROM airlock_gone WHERE ver <= (SELECT gone_floor FROM b)) ` +
      `SELECT version${notify} FROM b`;
    return { text, args };
  }

  /** The version the bump moved to. */
  bumped(rows: readonly Record<string, unknown>[]): number {
    return Number((rows[0] as { version: string }).version);
  }
}

interface StandingRow {
  version: string;
  first: string | null;
  tables: string | null;
  gone_floor: string;
  gone_xfloor: string;
  row_ver: string;
  head: string | null;
}

/**
 * Where the shared state stands, as a daemon that last saw version `seen` (-1: unknown) needs
 * it: the version, and the tables the versions since changed (with the first of them, to tell
 * whether the record reaches back that far); the row version and the floor of deleted keys;
 * the journal's newest revision.
 * One statement: run after the order's lock, so its snapshot is taken with the lock held.
 * `seen`: the version seen, written out (-1 counts as 0), or a parameter's placeholder.
 */
function standingText(seen: number | string): string {
  const since = typeof seen === "number" ? Math.max(0, seen) : seen;
  return (
    `SELECT s.version, (SELECT min(c.version) FROM airlock_changes c WHERE c.version > ${since}) AS first, ` +
    `(SELECT string_agg(c.tables, ',') FROM airlock_changes c WHERE c.version > ${since}) AS tables, s.gone_floor, s.gone_xfloor::text::bigint AS gone_xfloor, ` +
    `(SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM airlock_row_ver) AS row_ver, ` +
    `(SELECT MAX(revision) FROM journal) AS head FROM airlock_sync s WHERE s.id = 1`
  );
}

/** standingText with the version seen as a parameter: one prepared statement, whatever the version. */
const STANDING_FROM_PARAMETER = standingText("$1::bigint");

/** What standingText's row says, for a daemon that last saw `seen`. */
function standingOf(row: StandingRow, seen: number): { version: number; changed: Set<string> | null; rows: RowVersions } {
  const version = Number(row.version);
  // Known only when this daemon knows where it stood and no version since was trimmed.
  const known = seen >= 0 && (version === seen || Number(row.first) === seen + 1);
  const changed = known ? new Set((row.tables ?? "").split(",").filter(Boolean)) : null;
  return { version, changed: changed?.has("*") ? null : changed, rows: { ver: Number(row.row_ver), floor: Number(row.gone_floor), xfloor: Number(row.gone_xfloor), head: Number(row.head ?? 0) } };
}

/**
 * Where the shared state stands (standingText, its one parameter written as PostgreSQL's: it is
 * read twice), as the statement a gather sends; standingAnswer reads its answer.
 */
export const standingRead = (seen: number): Read<unknown[]> => reading.all(STANDING_FROM_PARAMETER, Math.max(0, seen));

export function standingAnswer(rows: unknown, seen: number): { version: number; changed: Set<string> | null; rows: RowVersions } {
  return standingOf((rows as StandingRow[])[0]!, seen);
}

/**
 * The same, read inside a transaction (Cluster.freshen, in the shared order: there no version
 * moves, since every transaction that moves one takes the order exclusively).
 */
export function* standing(seen: number): Tx<{ version: number; changed: Set<string> | null; rows: RowVersions }> {
  return standingAnswer(yield* all<StandingRow>(STANDING_FROM_PARAMETER, Math.max(0, seen)), seen);
}
