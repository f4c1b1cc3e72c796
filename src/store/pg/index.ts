// The PostgreSQL store (docs/cluster.md): several daemons share one database. This entry opens
// it (connect, migrate or check the schema, read the database's clock) and assembles it from
// its parts: url.ts (the URL, TLS, redaction), dialect.ts (SQLite's SQL and numbers as
// PostgreSQL's), migrate.ts, connection.ts (the one connection, reconnects), driver.ts (the
// queue of bodies, BEGIN/COMMIT) and peers.ts (the heartbeat and LISTEN of a shared store; the
// cluster version protocol it runs is the domain's, src/domain/cluster-sync.ts).
import type { Durability } from "../../config/settings.ts";
import { AirlockError } from "../../errors.ts";
import type { RowBody, SharedStore, Store } from "../store.ts";
import type { Tx } from "../tx.ts";
import { connect, Connection, describeError, type Link } from "./connection.ts";
import { DB_NOW } from "./dialect.ts";
import { PgDriver } from "./driver.ts";
import { checkSchema, migrate } from "./migrate.ts";
import { Peers } from "./peers.ts";
import { redactUrl, withTlsDefaults } from "./url.ts";

export interface PgStore extends Store {
  readonly kind: "postgres";
  readonly shared: SharedStore;
  tx<T>(fn: () => Tx<T>, rows?: RowBody): Promise<T>;
  read<T>(body: Tx<T>, rows?: RowBody): Promise<T>;
  readBeside<T>(fn: () => Tx<T>, rows: RowBody): Promise<T>;
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

export async function openPgStore(given: string, opts: PgOpenOptions = {}): Promise<PgStore> {
  const path = redactUrl(given);
  const url = withTlsDefaults(given, path);
  const cannotOpen = (err: unknown) => new AirlockError("config", `cannot open store ${path}: ${describeError(err, url)}`);
  let link: Link;
  try {
    link = await connect(url);
  } catch (err) {
    throw cannotOpen(err);
  }
  let clockOffsetMs: number;
  try {
    if (opts.readonly) await checkSchema(link.conn, path);
    else await migrate(link.conn);
    // The database's clock before anything is loaded: the first deadlines are armed against it.
    const sent = Date.now();
    const [now] = (await link.conn.unsafe(`SELECT ${DB_NOW} AS now`)) as { now: string }[];
    clockOffsetMs = Math.round(Number(now!.now) - (sent + Date.now()) / 2);
  } catch (err) {
    await link.client.close({ timeout: 0 }).catch(() => undefined);
    throw err instanceof AirlockError ? err : cannotOpen(err);
  }

  const conn = new Connection(url, path, link);
  const driver = new PgDriver(conn, path);
  // The reads beside row bodies (the status snapshot, the list tools) on a connection of their
  // own, opened at the first: a long one no longer holds this daemon's row batches.
  const reader = opts.readonly ? null : new Connection(url, path, null);
  driver.reader = reader;
  const peers = new Peers(driver, url, clockOffsetMs);
  return {
    kind: "postgres",
    path,
    durability: opts.durability ?? "full",
    tx: (fn, rows) => driver.tx(fn, rows),
    read: (body, rows) => driver.read(body, rows),
    readBeside: (fn, rows) => driver.readBeside(fn, rows),
    inSharedOrder: () => driver.inSharedOrder,
    shared: peers,
    afterCommit: (done, orElse) => driver.afterCommit(done, orElse),
    durable: () => null,
    async close() {
      if (driver.closed) return;
      await peers.leave();
      await driver.drain();
      await peers.stopListening();
      await conn.close();
      await reader?.close();
    },
  };
}
