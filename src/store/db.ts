// The store: opening the SQLite file with its pragmas, migrations, and the one transaction
// helper. Only this folder imports bun:sqlite. The daemon holds a single connection and is
// the only writer; every read-modify-write runs in one synchronous BEGIN IMMEDIATE transaction.
import { Database, type SQLQueryBindings, type Statement } from "bun:sqlite";
import { chmodSync, existsSync } from "node:fs";
import { ensureParentDir } from "../config/dirs.ts";
import { AirlockError, errorMessage } from "../errors.ts";
import { migrate } from "./migrate.ts";

export type { SQLQueryBindings };

/** A callback that returns a Promise is rejected by the type: no await inside a transaction. */
type SyncOnly<T> = T extends PromiseLike<unknown> ? never : T;

export interface Store {
  readonly path: string;
  readonly db: Database;
  /** Runs fn in one BEGIN IMMEDIATE transaction; after it commits, runs the afterCommit hooks fn queued. */
  tx<T>(fn: () => SyncOnly<T>): T;
  /**
   * Queues work for after the current transaction commits; if it rolls back, `orElse` runs
   * instead (so that a waiter promised a grant by a transaction that failed is still answered).
   */
  afterCommit(fn: () => void, orElse?: () => void): void;
  /** A cached prepared statement. */
  q<R = unknown>(sql: string): Statement<R, SQLQueryBindings[]>;
  close(): void;
}

export interface OpenOptions {
  readonly?: boolean;
}

export function openStore(path: string, opts: OpenOptions = {}): Store {
  const memory = path === ":memory:";
  if (!memory && !opts.readonly) ensureParentDir(path);
  let db: Database;
  try {
    db = opts.readonly ? new Database(path, { readonly: true, strict: true }) : new Database(path, { create: true, strict: true });
  } catch (err) {
    throw new AirlockError("config", `cannot open database ${path}: ${errorMessage(err)}`);
  }
  if (!opts.readonly) {
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA foreign_keys = ON");
    db.exec("PRAGMA busy_timeout = 5000");
    migrate(db);
    if (!memory) tightenFiles(path);
  } else {
    db.exec("PRAGMA busy_timeout = 2000");
  }

  const statements = new Map<string, Statement<unknown, SQLQueryBindings[]>>();
  type Hook = { done: () => void; orElse?: (() => void) | undefined };
  let pending: Hook[] | null = null;

  const store: Store = {
    path,
    db,
    tx<T>(fn: () => SyncOnly<T>): T {
      if (pending) return fn() as T; // nested: part of the outer transaction
      const hooks: Hook[] = [];
      pending = hooks;
      let out: T;
      try {
        out = db.transaction(fn).immediate() as T;
      } catch (err) {
        pending = null;
        for (const h of hooks) h.orElse?.();
        throw err;
      }
      pending = null;
      for (const h of hooks) h.done();
      return out;
    },
    afterCommit(done, orElse) {
      if (pending) pending.push({ done, orElse });
      else done();
    },
    q<R>(sql: string) {
      let s = statements.get(sql);
      if (!s) {
        s = db.query(sql);
        statements.set(sql, s);
      }
      return s as Statement<R, SQLQueryBindings[]>;
    },
    close() {
      for (const s of statements.values()) s.finalize();
      statements.clear();
      db.close(false);
    },
  };
  return store;
}

/** The database and its WAL side files are the user's alone (0600). */
function tightenFiles(path: string): void {
  for (const f of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(f)) {
      try {
        chmodSync(f, 0o600);
      } catch {
        // a file we cannot chmod is not ours; SQLite will still refuse what it cannot open
      }
    }
  }
}
