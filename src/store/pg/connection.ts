// The PostgreSQL store's one connection, and what happens when it goes: a lost connection is
// noticed (Bun tells us, or a statement finds it dead), replaced at the next call, and while the
// server stays unreachable, calls are answered `store unavailable: retry` at once, reconnecting
// with a backoff (docs/cluster.md, "Faults"). Errors shown never carry the password.
import { type ReservedSQL, SQL } from "bun";
import { AirlockError, errorMessage } from "../../errors.ts";
import { createLog } from "../../log.ts";

const log = createLog("store");

/** Reconnect backoff, as docs/cluster.md promises: 100 ms doubling to 5 s. */
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5000;
/** A call waiting on a reconnect fails after this long (Bun's default is 30 s). */
export const CONNECT_TIMEOUT_S = 5;

/** The one connection: a client of its own (max 1) with that connection reserved from it. */
export interface Link {
  client: SQL;
  conn: ReservedSQL;
  /** Set when the connection closed (Bun tells us) or a statement found it dead. */
  lost: boolean;
}

export async function connect(url: string): Promise<Link> {
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

/** What a server error or a failed connection says, without the password in it. */
export function describeError(err: unknown, url: string): string {
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
export function isConnectionError(err: unknown): boolean {
  const { code, errno } = err as { code?: unknown; errno?: unknown };
  if (typeof code === "string") {
    if (/^ERR_POSTGRES_(CONNECTION_|IDLE_TIMEOUT|LIFETIME_TIMEOUT|TLS_)/.test(code)) return true;
    if (/^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH|NETUNREACH|NOTFOUND)$/.test(code)) return true;
  }
  return typeof errno === "string" && /^(08|57P)/.test(errno);
}

/**
 * Whether PostgreSQL ended the transaction to break a deadlock (SQLSTATE 40P01) or a
 * serialization conflict (40001): nothing of it committed, and the same transaction run again
 * may well succeed (the other one has gone on).
 */
export function isConflict(err: unknown): boolean {
  const { errno } = err as { errno?: unknown };
  return errno === "40P01" || errno === "40001";
}

export const unavailable = () => new AirlockError("unavailable", "store unavailable: retry", { retryable: true });
export const outcomeUnknown = () =>
  new AirlockError("unavailable", "store unavailable: the outcome of this call is unknown; check before retrying", {
    retryable: true,
    outcome: "unknown",
  });

/** The live connection, replaced when lost. */
export class Connection {
  private link: Link | null;
  /** No reconnect attempt before this time (ms). */
  private retryAt = 0;
  private backoff = 0;
  /** Runs after every reconnect: what this daemon knew of the shared state may be stale. */
  onReconnect: () => void = () => undefined;

  constructor(
    /** The URL to connect to (with its password), and as it is shown (without). */
    private readonly url: string,
    private readonly path: string,
    /** Null: connected at the first ready() (a connection used only now and then). */
    first: Link | null,
  ) {
    this.link = first;
  }

  /** The live connection, reconnecting if it was lost; fails fast while backing off. */
  async ready(): Promise<Link> {
    if (this.link && !this.link.lost) return this.link;
    if (this.link) this.lose(this.link, new Error("connection closed"));
    if (Date.now() < this.retryAt) throw unavailable();
    try {
      this.link = await connect(this.url);
    } catch (err) {
      this.backoff = Math.min(this.backoff ? this.backoff * 2 : RETRY_MIN_MS, RETRY_MAX_MS);
      this.retryAt = Date.now() + this.backoff;
      log.warn(`store ${this.path} unreachable (${describeError(err, this.url)}); next attempt in ${this.backoff} ms`);
      throw unavailable();
    }
    this.onReconnect(); // a NOTIFY may have been lost meanwhile: the next transaction catches up
    if (this.backoff) log.info(`store ${this.path} reachable again`);
    this.backoff = 0;
    this.retryAt = 0;
    return this.link;
  }

  /** The connection is gone: said once, closed, and replaced at the next ready(). */
  lose(l: Link, err: unknown): void {
    if (l.lost && this.link !== l) return;
    l.lost = true;
    if (this.link === l) this.link = null;
    log.warn(`lost the connection to store ${this.path} (${describeError(err, this.url)}); reconnecting`);
    void l.client.close({ timeout: 0 }).catch(() => undefined);
  }

  /** A statement's error as the body should see it: a dead connection becomes "retry". */
  failure(l: Link, err: unknown): unknown {
    if (!isConnectionError(err)) return err;
    this.lose(l, err);
    return unavailable();
  }

  async close(): Promise<void> {
    const l = this.link;
    this.link = null;
    // The reserved connection first: Bun 1.4.5's close() of a client whose reserved
    // connection has run two queries or more waits for that connection forever.
    if (l) await l.conn.close().finally(() => l.client.close());
  }
}
