// The PostgreSQL store (docs/cluster.md): several daemons share one database. The domain's
// transaction bodies (tx.ts) run unchanged; this driver awaits each statement they yield on one
// connection, and runs the bodies strictly one after another, so a transaction never sees
// another's statements in the middle of its own (the same guarantee SQLite's driver gives by
// running a body in one go). Unlike SQLite's, a tx() called from inside a body does not join
// it: it waits its turn behind it (bodies compose with yield*, not with nested tx()).
//
// What it smooths over between the dialects, so the domain's SQL is written once:
// - placeholders (`?` → `$n`), the journal's revision (SQLite's lastInsertRowid → RETURNING)
//   and the table catalogue (sqlite_master → information_schema). The domain writes the rest in
//   SQL both accept (test/store/pg.test.ts has PostgreSQL prepare every statement it writes);
// - numbers: Bun's client hands int8 back as a string (as a BigInt with `bigint: true`) and
//   numeric always as a string, to keep precision; every integer in the schema is BIGINT
//   (milliseconds), COUNT is int8 and SUM of a BIGINT is numeric. The domain counts in JS
//   numbers, so int8 and numeric columns become numbers here, by the column's type, never by
//   the look of a value (a note whose value is "123" stays a string).
//
// TLS comes with the URL: Bun's client reads `sslmode` (disable, prefer, require, verify-ca,
// verify-full) and `sslrootcert` (the CA file, its `tls.caFile`) from the query string, so
// `postgres://u:p@db.example:5432/airlock?sslmode=verify-full&sslrootcert=/etc/airlock/ca.pem`
// needs nothing here. Checked with Bun 1.4.5 against PostgreSQL 15 with ssl=on and a private CA:
// verify-full connects when the host matches the certificate and refuses when it does not or
// the CA differs, and sslmode=require refuses a server without TLS.
import { type ReservedSQL, SQL } from "bun";
import type { Durability } from "../config/settings.ts";
import { AirlockError, errorMessage } from "../errors.ts";
import { createLog } from "../log.ts";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import m001 from "./migrations/pg/001-schema.sql" with { type: "text" };
import m002 from "./migrations/pg/002-cluster.sql" with { type: "text" };
import m003 from "./migrations/pg/003-changes.sql" with { type: "text" };
import m004 from "./migrations/pg/004-hosts.sql" with { type: "text" };
import m005 from "./migrations/pg/005-waiters.sql" with { type: "text" };
import { type ClusterHooks, DEAD_AFTER_MS, type SharedStore, type Store } from "./store.ts";
import type { RunResult, Stmt, Tx } from "./tx.ts";

export const PG_MIGRATIONS: readonly string[] = [m001, m002, m003, m004, m005];

export interface PgStore extends Store {
  readonly kind: "postgres";
  readonly shared: SharedStore;
  tx<T>(fn: () => Tx<T>): Promise<T>;
  read<T>(body: Tx<T>): Promise<T>;
  close(): Promise<void>;
}

export interface PgOpenOptions {
  /** Recorded for messages only: a COMMIT is durable on the server when it returns. */
  durability?: Durability;
  /**
   * To look, not to serve (status, doctor with the daemon down): no migration runs; the schema
   * must be there, at this binary's version.
   */
  readonly?: boolean;
}

const log = createLog("store");

/** The migrations' session lock: the bytes of "airlock!" as a big-endian int64. */
const MIGRATION_LOCK = "7019267304284449569";
/** Reconnect backoff, as docs/cluster.md promises: 100 ms doubling to 5 s. */
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5000;
/** A call waiting on a reconnect fails after this long (Bun's default is 30 s). */
const CONNECT_TIMEOUT_S = 5;
/** Every transaction of every daemon takes this lock first: one global order (docs/cluster.md). */
const ORDER_LOCK = "7019267304284449570";
/** How often a daemon heartbeats its row (others call it dead after DEAD_AFTER_MS). */
const HEARTBEAT_MS = 1000;
/** The channel a daemon that wrote notifies, so the others catch up now rather than on their next call. */
const CHANNEL = "airlock";
const DB_NOW = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
/** Type OIDs that Bun returns as strings: int8 and numeric. */
const NUMERIC_TYPES = new Set([20, 1700]);

export function isPostgresUrl(s: string): boolean {
  return /^postgres(ql)?:\/\//i.test(s);
}

/**
 * The URL as Bun's client should get it. Without `sslmode` Bun uses no TLS at all, where libpq
 * (and so every other PostgreSQL tool) prefers it: `prefer` is added, so a server that offers
 * TLS gets it. And a certificate check asked for must happen: NODE_TLS_REJECT_UNAUTHORIZED=0
 * would silently turn it off in Bun, so such a start is refused.
 */
export function withTlsDefaults(url: string, shown = redactUrl(url)): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url; // Bun's own message about it is clearer than a guess here
  }
  const mode = u.searchParams.get("sslmode");
  if (mode === null) {
    u.searchParams.set("sslmode", "prefer");
    return u.toString();
  }
  if (/^verify-(ca|full)$/i.test(mode) && process.env.NODE_TLS_REJECT_UNAUTHORIZED === "0") {
    throw new AirlockError("config", `cannot open store ${shown}: sslmode=${mode} asks for a certificate check, and NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment would turn it off; unset it`);
  }
  return url;
}

/** The URL with its password (in the userinfo or the query string) replaced by ***. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    // Bun also takes the password (and the client key's) from the query string.
    u.search = u.search.replace(/([?&](?:ssl)?password=)[^&]*/gi, "$1***");
    return u.toString();
  } catch {
    // Not a URL the parser takes: hide everything between the user's name and the host.
    return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@]*@/i, "$1:***@");
  }
}

/** What a server error or a failed connection says, without the password in it. */
function describeError(err: unknown, url: string): string {
  const code = (err as { code?: unknown }).code;
  let text = errorMessage(err);
  if (typeof code === "string" && code.startsWith("ERR_POSTGRES_") && code !== "ERR_POSTGRES_SERVER_ERROR") text += ` (${code})`;
  let password = "";
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    // no password we can find, none to hide
  }
  return password ? text.replaceAll(password, "***") : text;
}

/**
 * Whether an error means the connection is gone (the server is unreachable, restarting, or
 * dropped us), rather than that a statement failed. Bun reports a closed or refused connection
 * with its own codes; a backend the server terminated (a restart, a failover, an administrator's
 * pg_terminate_backend) fails with the server's FATAL, SQLSTATE 57P01..57P05, and every later
 * query on that connection repeats it; class 08 is the standard's connection exception.
 */
function isConnectionError(err: unknown): boolean {
  const { code, errno } = err as { code?: unknown; errno?: unknown };
  if (typeof code === "string") {
    if (/^ERR_POSTGRES_(CONNECTION_|IDLE_TIMEOUT|LIFETIME_TIMEOUT|TLS_)/.test(code)) return true;
    if (/^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH|NETUNREACH|NOTFOUND)$/.test(code)) return true;
  }
  return typeof errno === "string" && /^(08|57P)/.test(errno);
}

const unavailable = () => new AirlockError("unavailable", "store unavailable: retry", { retryable: true });
const outcomeUnknown = () =>
  new AirlockError("unavailable", "store unavailable: the outcome of this call is unknown; check before retrying", {
    retryable: true,
    outcome: "unknown",
  });

// --- Dialect -------------------------------------------------------------------------------

interface Translated {
  /** The statement for "get" and "all". */
  text: string;
  /** The statement for "run": a journal insert returns its revision. */
  runText: string;
  /** Whether runText returns the revision that becomes lastInsertRowid. */
  returnsRevision: boolean;
  /** Whether it changes rows (a get of an UPSERT ... RETURNING does): the shared version moves. */
  writes: boolean;
  /** The table it writes, if it writes ("*" when that cannot be told: every cache is stale). */
  table: string | null;
}

const TABLE_EXISTS_SQLITE = /^SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = \?$/i;
const TABLE_EXISTS_PG =
  "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name = $1";

// A string literal, a quoted identifier or a comment (kept as they are), or a placeholder.
const PLACEHOLDER = /'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|\?/g;

/**
 * SQLite's SQL, as the domain writes it, in PostgreSQL's dialect. The domain writes SQL both
 * accept (a qualified column in an upsert's SET, an alias on a subquery in FROM, BIGINT-sized
 * integers), so only the placeholders, the one catalogue query and the journal's revision differ.
 */
export function translate(sql: string): Translated {
  if (TABLE_EXISTS_SQLITE.test(sql.replace(/\s+/g, " ").trim())) {
    return { text: TABLE_EXISTS_PG, runText: TABLE_EXISTS_PG, returnsRevision: false, writes: false, table: null };
  }
  let param = 0;
  const text = sql.replace(PLACEHOLDER, (t) => (t === "?" ? `$${++param}` : t));
  // SQLite's lastInsertRowid is the journal's revision; PostgreSQL says it with RETURNING.
  const returnsRevision = /^\s*INSERT\s+INTO\s+journal\b/i.test(text) && !/\bRETURNING\b/i.test(text);
  const writes = /^\s*(INSERT|UPDATE|DELETE)\b/i.test(text);
  const table = writes ? (/^\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z_][a-z0-9_]*)\b/i.exec(text)?.[1]?.toLowerCase() ?? "*") : null;
  return { text, runText: returnsRevision ? `${text} RETURNING revision` : text, returnsRevision, writes, table };
}

// --- Connection ----------------------------------------------------------------------------

/** The one connection: a client of its own (max 1) with that connection reserved from it. */
interface Link {
  client: SQL;
  conn: ReservedSQL;
  /** Set when the connection closed (Bun tells us) or a statement found it dead. */
  lost: boolean;
}

async function connect(url: string): Promise<Link> {
  const state = { lost: false };
  const client = new SQL(url, { max: 1, connectionTimeout: CONNECT_TIMEOUT_S, onclose: () => (state.lost = true) });
  try {
    const conn = await client.reserve();
    return Object.assign(state, { client, conn });
  } catch (err) {
    void client.close({ timeout: 0 }).catch(() => undefined);
    throw err;
  }
}

/** A reader's check: the schema is this binary's (a reader never migrates). */
async function checkSchema(conn: ReservedSQL, path: string): Promise<void> {
  const known = await conn.unsafe("SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'airlock_schema'");
  const rows = known.length === 0 ? [] : ((await conn.unsafe("SELECT version FROM airlock_schema")) as { version: number }[]);
  const version = rows[0]?.version ?? 0;
  if (version === 0) throw new AirlockError("config", `no Airlock state in ${path} yet (a daemon started with --store creates it)`);
  if (version !== PG_MIGRATIONS.length) {
    throw new AirlockError(
      "config",
      `${path} has schema version ${version}, this airlock reads version ${PG_MIGRATIONS.length}; use the airlock the daemons run${version < PG_MIGRATIONS.length ? ", or start a daemon of this version to migrate it" : ""}`,
    );
  }
}

async function migrate(conn: ReservedSQL): Promise<void> {
  // A session lock, held across the migrations' own transactions: a second daemon starting at
  // the same time waits here, then finds the schema current.
  await conn.unsafe(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
  try {
    // Looked up before creating, so a runtime role without CREATE on the schema can start once
    // an owner has migrated.
    const known = await conn.unsafe("SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'airlock_schema'");
    if (known.length === 0) await conn.unsafe("CREATE TABLE airlock_schema (version INT NOT NULL)");
    const rows = (await conn.unsafe("SELECT version FROM airlock_schema")) as { version: number }[];
    if (rows.length === 0) await conn.unsafe("INSERT INTO airlock_schema (version) VALUES (0)");
    const current = rows[0]?.version ?? 0;
    if (current > PG_MIGRATIONS.length) {
      throw new AirlockError(
        "config",
        `the database has schema version ${current}, newer than this airlock understands (${PG_MIGRATIONS.length}); upgrade airlock or use another --store`,
      );
    }
    for (let v = current; v < PG_MIGRATIONS.length; v++) {
      await conn.unsafe("BEGIN");
      try {
        await conn.unsafe(PG_MIGRATIONS[v]!);
        await conn.unsafe(`UPDATE airlock_schema SET version = ${v + 1}`);
        await conn.unsafe("COMMIT");
      } catch (err) {
        await conn.unsafe("ROLLBACK").catch(() => undefined);
        throw err;
      }
    }
  } finally {
    await conn.unsafe(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
  }
}

// --- Results -------------------------------------------------------------------------------

interface PgResult extends Array<Record<string, unknown>> {
  columns?: { name: string; type: number }[];
  affectedRows?: number;
  command?: string | null;
}

/** Rows as plain objects, with int8 and numeric columns as numbers. */
function rowsOf(result: PgResult, limit = result.length): Record<string, unknown>[] {
  const columns = result.columns ?? [];
  const rows: Record<string, unknown>[] = [];
  for (let i = 0; i < Math.min(limit, result.length); i++) {
    const from = result[i]!;
    const row: Record<string, unknown> = {};
    for (const c of columns) {
      const v = from[c.name];
      row[c.name] = v !== null && v !== undefined && NUMERIC_TYPES.has(c.type) ? Number(v) : v;
    }
    rows.push(row);
  }
  return rows;
}

// --- The store -----------------------------------------------------------------------------

type Hook = { done: () => void; orElse?: (() => void) | undefined };

export async function openPgStore(given: string, opts: PgOpenOptions = {}): Promise<PgStore> {
  const path = redactUrl(given);
  const url = withTlsDefaults(given, path);
  let link: Link | null;
  try {
    link = await connect(url);
  } catch (err) {
    throw new AirlockError("config", `cannot open store ${path}: ${describeError(err, url)}`);
  }
  try {
    if (opts.readonly) await checkSchema(link.conn, path);
    else await migrate(link.conn);
  } catch (err) {
    await link.client.close({ timeout: 0 }).catch(() => undefined);
    if (err instanceof AirlockError) throw err;
    throw new AirlockError("config", `cannot open store ${path}: ${describeError(err, url)}`);
  }

  // The database's clock before anything is loaded: the first deadlines are armed against it.
  let clockOffsetMs = 0;
  try {
    const sent = Date.now();
    const [now] = (await link.conn.unsafe(`SELECT ${DB_NOW} AS now`)) as { now: string }[];
    clockOffsetMs = Math.round(Number(now!.now) - (sent + Date.now()) / 2);
  } catch (err) {
    await link.client.close({ timeout: 0 }).catch(() => undefined);
    throw new AirlockError("config", `cannot open store ${path}: ${describeError(err, url)}`);
  }

  const translations = new Map<string, Translated>();
  let tail: Promise<unknown> = Promise.resolve(); // the end of the queue of bodies
  let closed = false;
  let retryAt = 0; // no reconnect attempt before this time (ms)
  let backoff = 0;
  // Hooks of the transaction whose body is executing right now. Only set while the body's own
  // code runs (between two statements other code runs too, and its afterCommit is not ours).
  let pending: Hook[] | null = null;
  // Sharing the store with other daemons (attach): the cluster's hooks, the version of the
  // shared state this daemon last saw (-1: unknown, catch up), and writes counted by exec.
  const daemonId = randomBytes(8).toString("hex");
  let cluster: ClusterHooks | null = null;
  let seenVersion = -1;
  /** The tables the running transaction changed (its version records them for the others). */
  let written = new Set<string>();

  /** Runs bodies one at a time, in the order they were asked for. */
  function enqueue<T>(job: () => Promise<T>): Promise<T> {
    if (closed) return Promise.reject(new AirlockError("unavailable", `store ${path} is closed`));
    const run = tail.then(job);
    tail = run.catch(() => undefined);
    return run;
  }

  function lose(l: Link, err: unknown): void {
    if (l.lost && link !== l) return;
    l.lost = true;
    if (link === l) link = null;
    log.warn(`lost the connection to store ${path} (${describeError(err, url)}); reconnecting`);
    void l.client.close({ timeout: 0 }).catch(() => undefined);
  }

  /** The live connection, reconnecting if it was lost; fails fast while backing off. */
  async function ready(): Promise<Link> {
    if (link && !link.lost) return link;
    if (link) lose(link, new Error("connection closed"));
    if (Date.now() < retryAt) throw unavailable();
    try {
      link = await connect(url);
    } catch (err) {
      backoff = Math.min(backoff ? backoff * 2 : RETRY_MIN_MS, RETRY_MAX_MS);
      retryAt = Date.now() + backoff;
      log.warn(`store ${path} unreachable (${describeError(err, url)}); next attempt in ${backoff} ms`);
      throw unavailable();
    }
    seenVersion = -1; // a NOTIFY may have been lost meanwhile: the next transaction catches up
    if (backoff) log.info(`store ${path} reachable again`);
    backoff = 0;
    retryAt = 0;
    return link;
  }

  /** A statement's error as the body should see it: a dead connection becomes "retry". */
  function failure(l: Link, err: unknown): unknown {
    if (!isConnectionError(err)) return err;
    lose(l, err);
    return unavailable();
  }

  async function exec(l: Link, stmt: Stmt): Promise<unknown> {
    let t = translations.get(stmt.sql);
    if (!t) {
      t = translate(stmt.sql);
      translations.set(stmt.sql, t);
    }
    const result = (await l.conn.unsafe(stmt.mode === "run" ? t.runText : t.text, stmt.args)) as PgResult;
    // Only a statement that changed rows moves the shared version (a DELETE that found nothing
    // must not send every other daemon to catch up, and them back to this one).
    if ((stmt.mode === "run" || t.writes) && (result.affectedRows ?? result.length) > 0) written.add(t.table ?? "*");
    if (stmt.mode === "all") return rowsOf(result);
    if (stmt.mode === "get") return rowsOf(result, 1)[0] ?? null;
    const lastInsertRowid = t.returnsRevision ? Number(rowsOf(result, 1)[0]?.revision) : 0;
    return { changes: result.affectedRows ?? 0, lastInsertRowid } satisfies RunResult;
  }

  /** Runs one step of a body's own code, with hooks (or none) as the afterCommit list. */
  function step<R>(hooks: Hook[] | null, f: () => R): R {
    pending = hooks;
    try {
      return f();
    } finally {
      pending = null;
    }
  }

  /** Drives a body to its end: each yielded statement is awaited and its result sent back. */
  async function drive<T>(l: Link, body: Tx<T>, hooks: Hook[] | null): Promise<T> {
    let next = step(hooks, () => body.next());
    while (!next.done) {
      let result: unknown;
      try {
        result = await exec(l, next.value);
      } catch (err) {
        const thrown = failure(l, err);
        next = step(hooks, () => body.throw(thrown)); // so the body's own try/finally runs
        continue;
      }
      next = step(hooks, () => body.next(result));
    }
    return next.value;
  }

  /** BEGIN on a live connection. A connection found dead here had done nothing for this call
   *  yet, so it is replaced once, silently: a server restart between two calls costs no error. */
  async function begin(): Promise<{ l: Link; version: number; changed: ReadonlySet<string> | null }> {
    // On a shared store, in the same round trip: the global order's lock, then (a statement of
    // its own, so its snapshot is taken with the lock held) what the others committed since
    // this daemon last looked: the version, and the tables those versions changed.
    const since = Math.max(0, seenVersion);
    const text = cluster
      ? `BEGIN; SELECT pg_advisory_xact_lock(${ORDER_LOCK}); SELECT s.version, ` +
        `(SELECT min(c.version) FROM airlock_changes c WHERE c.version > ${since}) AS first, ` +
        `(SELECT string_agg(c.tables, ',') FROM airlock_changes c WHERE c.version > ${since}) AS tables FROM airlock_sync s WHERE s.id = 1`
      : "BEGIN";
    for (let attempt = 0; ; attempt++) {
      const l = await ready();
      try {
        if (!cluster) {
          await l.conn.unsafe(text);
          return { l, version: seenVersion, changed: null };
        }
        const results = (await l.conn.unsafe(text)) as unknown as { version: string; first: string | null; tables: string | null }[][];
        const row = results[2]![0]!;
        const version = Number(row.version);
        // Known only when this daemon knows where it stood and no version since was trimmed.
        const known = seenVersion >= 0 && (version === seenVersion || Number(row.first) === seenVersion + 1);
        return { l, version, changed: known ? new Set((row.tables ?? "").split(",").filter(Boolean)) : null };
      } catch (err) {
        const thrown = failure(l, err);
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
  async function commit(l: Link, before?: string): Promise<PgResult | undefined> {
    // Lost before COMMIT was sent: the server rolls back, the outcome is known.
    if (l.lost) throw unavailable();
    let results: PgResult[];
    try {
      results = before === undefined ? [(await l.conn.unsafe("COMMIT")) as PgResult] : ((await l.conn.unsafe(`${before}; COMMIT`)) as unknown as PgResult[]);
    } catch (err) {
      if (!isConnectionError(err)) throw err;
      lose(l, err);
      throw outcomeUnknown();
    }
    // PostgreSQL answers COMMIT of a failed transaction with ROLLBACK, not an error: a body
    // caught a statement's error and went on.
    if (results[results.length - 1]!.command === "ROLLBACK") {
      throw new AirlockError("internal", "the transaction rolled back: a statement in it failed and the body went on");
    }
    return before === undefined ? undefined : results[0];
  }

  async function runTx<T>(fn: () => Tx<T>): Promise<T> {
    const { l, version: found, changed } = await begin();
    const hooks: Hook[] = [];
    let out: T;
    let version = found;
    try {
      written = new Set();
      if (cluster && version !== seenVersion) await drive(l, cluster.catchUp(changed?.has("*") ? null : changed), hooks);
      out = await drive(l, step(hooks, fn), hooks);
      // A transaction that changed rows on a shared store moves the version and notifies, with
      // its COMMIT (one round trip). The NOTIFY is delivered only if it commits.
      const flushed = cluster ? await drive(l, cluster.flush(), hooks) : false;
      // The version records the tables it changed (names from our own SQL: [a-z_*] only), and
      // the oldest records beyond a thousand go.
      const tables = [...written].filter((t) => /^([a-z_]+|\*)$/.test(t)).join(",");
      const bump =
        cluster && (flushed || written.size > 0)
          ? `WITH b AS (UPDATE airlock_sync SET version = version + 1 WHERE id = 1 RETURNING version), ` +
            `c AS (INSERT INTO airlock_changes (version, tables) SELECT version, '${tables || "*"}' FROM b), ` +
            `d AS (DELETE FROM airlock_changes WHERE version <= (SELECT version FROM b) - 1000) ` +
            `SELECT version, pg_notify('${CHANNEL}', '${daemonId}') FROM b`
          : undefined;
      const bumped = await commit(l, bump);
      if (bumped) version = Number((bumped[0] as { version: string }).version);
    } catch (err) {
      if (!l.lost) await l.conn.unsafe("ROLLBACK").catch((e: unknown) => failure(l, e));
      for (const h of hooks) h.orElse?.();
      if (cluster) {
        seenVersion = -1; // memory may be ahead of the rows now: reread them all
        cluster.forget();
      }
      throw err;
    }
    seenVersion = version;
    for (const h of hooks) h.done();
    return out;
  }

  // ---- sharing the store with other daemons ----

  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let listener: SQL | undefined;
  let poked = false;
  let liveDaemons = "";

  /**
   * Another daemon wrote (or one came or went): one catch-up transaction, unless one is already
   * waiting its turn. After a NOTIFY only when a call here is blocked, since the change may
   * answer it; otherwise the next call here catches up first anyway, and N daemons do not each
   * run a transaction for every write of every other. A daemon coming or going is caught up
   * with at once: the expiries it armed may now be this daemon's to fire.
   */
  function poke(notified = false): void {
    if (poked || closed || !cluster) return;
    if (notified && !cluster.waiting()) return;
    poked = true;
    enqueue(() => {
      poked = false;
      return runTx(function* () {});
    }).catch((err: unknown) => log.debug(`a catch-up after another daemon's change failed: ${errorMessage(err)}`));
  }

  /**
   * The heartbeat, which also watches the others': a daemon that fell silent (or came) changes
   * which blocked calls count as attached, though no transaction wrote anything, so the lines
   * are reloaded then too.
   */
  function beat(): Promise<unknown> {
    return enqueue(async () => {
      const l = await ready();
      try {
        const sent = Date.now();
        // The daemon's row, and its machine's (which outlives it: see migration 004).
        const [beat] = (await l.conn.unsafe(
          `WITH d AS (INSERT INTO daemons (id, host, pid, started_at, seen_at) VALUES ($1, $2, $3, ${DB_NOW}, ${DB_NOW}) ` +
            `ON CONFLICT (id) DO UPDATE SET seen_at = ${DB_NOW} RETURNING seen_at), ` +
            `h AS (INSERT INTO hosts (host, seen_at) SELECT $2, seen_at FROM d ON CONFLICT (host) DO UPDATE SET seen_at = excluded.seen_at) ` +
            `SELECT seen_at FROM d`,
          [daemonId, hostname(), process.pid],
        )) as { seen_at: string }[];
        // The database's clock, read halfway through the round trip (on loopback, within a ms).
        clockOffsetMs = Math.round(Number(beat!.seen_at) - (sent + Date.now()) / 2);
        const rows = (await l.conn.unsafe(`SELECT id FROM daemons WHERE seen_at >= ${DB_NOW} - $1 ORDER BY id`, [DEAD_AFTER_MS])) as { id: string }[];
        const live = rows.map((r) => r.id).join(" ");
        if (live !== liveDaemons) {
          liveDaemons = live;
          seenVersion = -1;
          poke();
        }
      } catch (err) {
        throw failure(l, err);
      }
    });
  }

  const shared: SharedStore = {
    daemonId,
    get clockOffsetMs() {
      return clockOffsetMs;
    },
    async attach(hooks) {
      cluster = hooks;
      seenVersion = -1;
      await beat();
      heartbeat = setInterval(() => void beat().catch((err: unknown) => log.debug(`heartbeat failed: ${errorMessage(err)}`)), HEARTBEAT_MS);
      heartbeat.unref?.();
      // Bun's client re-subscribes a LISTEN by itself after its connection drops; a NOTIFY sent
      // meanwhile is lost, which the version check at the next transaction makes up for.
      listener = new SQL(url, { max: 1, connectionTimeout: CONNECT_TIMEOUT_S });
      await listener.listen(CHANNEL, (payload: string) => {
        if (payload !== daemonId) poke(true);
      });
    },
  };

  const store: PgStore = {
    kind: "postgres",
    path,
    durability: opts.durability ?? "full",
    tx: (fn) => enqueue(() => runTx(fn)),
    // On a shared store a read takes its turn in the global order too: what it shows (lines
    // included) is current, and a catch-up it triggers may write.
    read: (body) => enqueue(async () => (cluster ? runTx(() => body) : drive(await ready(), body, null))),
    shared,
    afterCommit(done, orElse) {
      if (pending) pending.push({ done, orElse });
      else done();
    },
    durable: () => null,
    async close() {
      if (closed) return;
      if (heartbeat) clearInterval(heartbeat);
      // Leaving on purpose: the others forget this daemon (its waiters' places) at once.
      if (cluster) {
        await enqueue(async () => {
          const l = await ready();
          await l.conn.unsafe("DELETE FROM daemons WHERE id = $1", [daemonId]);
        }).catch(() => undefined);
      }
      closed = true;
      await tail;
      await listener?.close({ timeout: 0 }).catch(() => undefined);
      const l = link;
      link = null;
      // The reserved connection first: Bun 1.4.5's close() of a client whose reserved
      // connection has run two queries or more waits for that connection forever.
      if (l) await l.conn.close().finally(() => l.client.close());
    },
  };
  return store;
}
