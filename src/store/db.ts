// The store: opening the SQLite file with its pragmas, migrations, and the one transaction
// helper. Only this folder imports bun:sqlite. The daemon holds a single connection and is
// the only writer; every read-modify-write runs in one synchronous transaction.
//
// Two durability modes:
// - "normal": synchronous=NORMAL. An acknowledged write survives a crash of the daemon (it is
//   in the WAL), not necessarily a power loss. A transaction commits at once, unless it is not
//   the first of its event-loop turn and the store was opened with `batchBusyTurns` (the
//   daemon): then it joins a batch as in "full", so that 64 clients' calls share a few commits
//   instead of paying one each; a lone client's calls, one per turn, never wait for a batch.
// - "full": synchronous=FULL with group commit. Transactions that arrive while a batch is open
//   (one turn of the event loop) run in one BEGIN IMMEDIATE, each in its own SAVEPOINT so a
//   failing call undoes only itself, and the batch commits with one fsync. Callers wait on
//   durable() before they answer, so an acknowledged write survives power loss.
import { Database, type SQLQueryBindings, type Statement } from "bun:sqlite";
import { chmodSync, existsSync } from "node:fs";
import { ensureParentDir } from "../config/dirs.ts";
import type { Durability } from "../config/settings.ts";
import { AirlockError, errorMessage } from "../errors.ts";
import { mark, TRACING } from "../trace.ts";
import { migrate } from "./migrate.ts";
import type { Store } from "./store.ts";
import { type Answer, runNow, type Tx } from "./tx.ts";

export type { SQLQueryBindings };

/** The page size of a database this store creates (SQLite's default is 4096). */
export const PAGE_SIZE = 1024;

export type { Durability, Store };

/** SQLite's store: every statement is answered at once, so a transaction returns its result. */
export interface SqliteStore extends Store {
  readonly kind: "sqlite";
  readonly db: Database;
  /**
   * Runs the body fn makes in one transaction (in "full" mode: a savepoint of the open batch),
   * answering each statement at once; after it commits, runs the afterCommit hooks it queued.
   * Nested calls join the outer transaction.
   */
  tx<T>(fn: () => Tx<T>): T;
  read<T>(body: Tx<T>): T;
  /** A cached prepared statement. */
  q<R = unknown>(sql: string): Statement<R, SQLQueryBindings[]>;
  /** Commits any open batch and closes the connection. */
  close(): void;
}

export interface OpenOptions {
  readonly?: boolean;
  durability?: Durability;
  /**
   * "normal" only: the second and later transactions of one event-loop turn share one batch,
   * committed at the end of the turn (callers wait on durable(), as in "full"). The daemon
   * sets it; without it every transaction commits at once.
   */
  batchBusyTurns?: boolean;
}


type Hook = { done: () => void; orElse?: (() => void) | undefined };

interface Batch {
  hooks: Hook[];
  waiters: { resolve: () => void; reject: (err: unknown) => void }[];
  promise?: Promise<void>;
}

export function openStore(path: string, opts: OpenOptions = {}): SqliteStore {
  const memory = path === ":memory:";
  const durability: Durability = opts.durability ?? "normal";
  if (!memory && !opts.readonly) ensureParentDir(path);
  let db: Database;
  try {
    db = opts.readonly ? new Database(path, { readonly: true, strict: true }) : new Database(path, { create: true, strict: true });
  } catch (err) {
    throw new AirlockError("config", `cannot open database ${path}: ${errorMessage(err)}`);
  }
  if (!opts.readonly) {
    // A new database gets 1 KiB pages (an existing one keeps the size it was made with): a
    // call's commit writes whole pages to the WAL (a lock: its row, its agent index, the
    // journal's last leaf), and under full the fsync covers them; rows here are small. Paired,
    // a lock hand-off under full takes 0.92-0.95x the time with 4 KiB (bench/README.md).
    db.exec(`PRAGMA page_size = ${PAGE_SIZE}`);
    db.exec("PRAGMA journal_mode = WAL");
    db.exec(`PRAGMA synchronous = ${durability === "full" ? "FULL" : "NORMAL"}`);
    db.exec("PRAGMA foreign_keys = ON");
    db.exec("PRAGMA busy_timeout = 5000");
    migrate(db);
    if (!memory) tightenFiles(path);
  } else {
    db.exec("PRAGMA busy_timeout = 2000");
  }

  const statements = new Map<string, Statement<unknown, SQLQueryBindings[]>>();
  let pending: Hook[] | null = null; // hooks of the transaction running now
  let batch: Batch | null = null; // the open group-commit batch ("full", or a busy turn in "normal")
  const batchBusyTurns = durability === "normal" && opts.batchBusyTurns === true;
  let turnHasTx = false; // batchBusyTurns: a transaction has already run in this event-loop turn
  const endTurn = () => {
    turnHasTx = false;
  };
  const ctl = (sql: string) => void store.q(sql).run();
  const rollbackQuietly = (sql: string) => {
    try {
      ctl(sql);
    } catch {
      // SQLite already rolled back (a failed COMMIT, a full disk): nothing is left to undo.
    }
  };

  /** SQLite's driver: each statement answered at once, on the one connection. */
  const exec: Answer = (mode, sql, args) => {
    const st = store.q(sql);
    return mode === "get" ? st.get(...args) : mode === "all" ? st.all(...args) : st.run(...args);
  };
  let finish: (() => Tx<unknown> | null) | null = null; // finishWith's: the lines' write-down
  const runBody =
    <T>(fn: () => Tx<T>) =>
    (): T => {
      const out = runNow(fn(), exec);
      const last = finish?.();
      if (last) runNow(last, exec);
      return out;
    };

  /** Runs fn with its own hook list; on failure its orElse hooks run and the error goes on. */
  function runWithHooks<T>(fn: () => T, begin: () => void, commit: () => void, rollback: () => void): { out: T; hooks: Hook[] } {
    const hooks: Hook[] = [];
    pending = hooks;
    let out: T;
    try {
      begin();
      out = fn();
      commit();
    } catch (err) {
      pending = null;
      try {
        rollback();
      } finally {
        for (const h of hooks) h.orElse?.();
      }
      throw err;
    }
    pending = null;
    return { out, hooks };
  }

  const commitNow = () => {
    if (TRACING) mark("commit");
    ctl("COMMIT");
  };

  /** Whether another transaction ran earlier in this event-loop turn (and notes that one has). */
  function secondOfTurn(): boolean {
    if (turnHasTx) return true;
    turnHasTx = true;
    setImmediate(endTurn);
    return false;
  }

  function flush(): void {
    const b = batch;
    if (!b) return;
    batch = null;
    if (TRACING) mark("commit");
    try {
      ctl("COMMIT");
    } catch (err) {
      rollbackQuietly("ROLLBACK");
      for (const h of b.hooks) h.orElse?.();
      for (const w of b.waiters) w.reject(err);
      return;
    }
    if (TRACING) mark("committed");
    for (const h of b.hooks) h.done();
    if (TRACING) mark("hooks done");
    for (const w of b.waiters) w.resolve();
  }

  const store: SqliteStore = {
    kind: "sqlite",
    path,
    db,
    durability,
    tx<T>(fn: () => Tx<T>): T {
      const body = runBody(fn);
      if (pending) return body(); // nested: part of the outer transaction
      if (TRACING) mark("tx");
      if (durability === "normal" && !batch && !(batchBusyTurns && secondOfTurn())) {
        // Prepared BEGIN/COMMIT (bun's transaction() wrapper costs a few µs more per call,
        // and every hand-off pays it). A failed statement may have rolled back already.
        const { out, hooks } = runWithHooks(body, () => ctl("BEGIN IMMEDIATE"), commitNow, () => rollbackQuietly("ROLLBACK"));
        if (TRACING) mark("committed");
        for (const h of hooks) h.done();
        if (TRACING) mark("hooks done");
        return out;
      }
      if (!batch) {
        ctl("BEGIN IMMEDIATE");
        batch = { hooks: [], waiters: [] };
        setImmediate(flush);
      }
      // Transactions of a batch run one after another (a nested call joins the outer one), so
      // one savepoint name serves them all and its statements stay prepared.
      const { out, hooks } = runWithHooks(
        body,
        () => ctl("SAVEPOINT tx"),
        () => ctl("RELEASE tx"),
        () => {
          ctl("ROLLBACK TO tx");
          ctl("RELEASE tx");
        },
      );
      batch.hooks.push(...hooks);
      if (TRACING) mark("tx end");
      return out;
    },
    read<T>(body: Tx<T>): T {
      return runNow(body, exec);
    },
    afterCommit(done, orElse) {
      if (pending) pending.push({ done, orElse });
      else done();
    },
    finishWith(fn) {
      finish = fn;
    },
    durable() {
      const b = batch;
      if (!b) return null;
      b.promise ??= new Promise<void>((resolve, reject) => b.waiters.push({ resolve, reject }));
      return b.promise;
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
      flush();
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
