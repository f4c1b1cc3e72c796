// The PostgreSQL store's driver, against a real server (AIRLOCK_TEST_PG; skipped without it):
// transactions and their hooks, one body at a time, numbers as numbers, the dialect, the
// migrations under their lock, and what a caller sees when the connection is lost.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { AirlockError } from "../../src/errors.ts";
import { translate } from "../../src/store/pg/dialect.ts";
import { JOINED_ROWS, joinHeld } from "../../src/store/pg/statement.ts";
import type { Stmt } from "../../src/store/tx.ts";
import { openPgStore, type PgStore } from "../../src/store/pg/index.ts";
import { PG_MIGRATIONS } from "../../src/store/pg/migrate.ts";
import { isPostgresUrl, redactUrl, withTlsDefaults } from "../../src/store/pg/url.ts";
import { all, get, last, run, runLater, type Tx } from "../../src/store/tx.ts";
import { entryFromRow } from "../../src/domain/journal-entry.ts";
import { ROOT } from "../helpers/daemon.ts";
import { describePg, freshDatabase, withClient } from "../helpers/pg.ts";

/** Runs a test with a store on a database of its own. */
async function withStore(fn: (store: PgStore, db: { url: string; name: string }) => Promise<void>): Promise<void> {
  const db = await freshDatabase();
  const store = await openPgStore(db.url);
  try {
    await fn(store, db);
  } finally {
    await store.close();
    await db.drop();
  }
}

/** Ends the store's connection from the server's side, as a restart or a failover would. */
async function killBackends(db: { url: string; name: string }): Promise<number> {
  return withClient(adminUrl(db), async (sql) => {
    const rows = await sql.unsafe("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [db.name]);
    return rows.length;
  });
}

/** The error a promise rejects with (or null when it resolves). */
async function failureOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
    return null;
  } catch (err) {
    return err;
  }
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("URLs", () => {
  test("redactUrl replaces the password and keeps the user, host and options", () => {
    const url = "postgres://alice:s3cr3t-pw@db.example:5432/airlock?sslmode=verify-full&sslrootcert=/etc/airlock/ca.pem";
    const shown = redactUrl(url);
    expect(shown).toBe("postgres://alice:***@db.example:5432/airlock?sslmode=verify-full&sslrootcert=/etc/airlock/ca.pem");
    expect(redactUrl("postgresql://bob@db/airlock")).toBe("postgresql://bob@db/airlock");
    expect(redactUrl("postgres://db/airlock?user=bob&password=s3cr3t-pw")).not.toContain("s3cr3t-pw");
    expect(redactUrl("postgres://bob:s3cr3t-pw@not a host/x")).not.toContain("s3cr3t-pw");
  });

  test("isPostgresUrl takes postgres:// and postgresql:// only", () => {
    expect(isPostgresUrl("postgres://h/db")).toBe(true);
    expect(isPostgresUrl("postgresql://h/db")).toBe(true);
    expect(isPostgresUrl("/home/me/.airlock/state.db")).toBe(false);
    expect(isPostgresUrl("mysql://h/db")).toBe(false);
  });

  test("a server that cannot be reached at open is a config error that does not show the password", async () => {
    const url = `postgres://alice:s3cr3t-pw@127.0.0.1:${await closedPort()}/airlock`;
    const err = await failureOf(openPgStore(url));
    expect(err).toBeInstanceOf(AirlockError);
    expect((err as AirlockError).code).toBe("config");
    expect((err as AirlockError).message).toStartWith(`cannot open store postgres://alice:***@127.0.0.1:`);
    expect((err as AirlockError).message).not.toContain("s3cr3t-pw");
  });
});

describe("dialect", () => {
  test("numbers ? placeholders in order and leaves quoted text and comments alone", () => {
    expect(translate("SELECT '?' AS q, \"a?\" FROM t WHERE x = ? -- what?\nAND y = ?").text).toBe(
      "SELECT '?' AS q, \"a?\" FROM t WHERE x = $1 -- what?\nAND y = $2",
    );
  });

  test("a journal insert returns its revision when run, and only then", () => {
    const t = translate("INSERT INTO journal (at, kind, resource, agent_id, reason, data) VALUES (?, ?, ?, ?, ?, ?)");
    expect(t.runText).toEndWith(" RETURNING revision");
    expect(t.text).not.toContain("RETURNING");
    expect(translate("INSERT INTO journal (at) VALUES (?) RETURNING revision").runText).toBe("INSERT INTO journal (at) VALUES ($1) RETURNING revision");
  });

  // What a statement writes moves the shared version (the others catch up on that table): a
  // write hidden in a WITH must count as one, a WITH that only reads must not.
  test("a write names its table, a WITH whose first part writes too; reads write nothing", () => {
    const of = (sql: string) => ({ writes: translate(sql).writes, table: translate(sql).table });
    expect(of("UPDATE tasks SET state = ? WHERE id = ?")).toEqual({ writes: true, table: "tasks" });
    expect(of("DELETE FROM events WHERE name = ?")).toEqual({ writes: true, table: "events" });
    expect(of("INSERT INTO counters (name, value) VALUES (?, ?)")).toEqual({ writes: true, table: "counters" });
    expect(of("WITH d AS (DELETE FROM events WHERE name = ?) SELECT 1 AS nobody")).toEqual({ writes: true, table: "events" });
    expect(of("  with r as ( insert into notes (key) VALUES (?) RETURNING key) SELECT * FROM r")).toEqual({ writes: true, table: "notes" });
    expect(of("WITH r AS (SELECT name FROM locks) SELECT * FROM r")).toEqual({ writes: false, table: null });
    expect(of("SELECT value FROM counters WHERE name = ?")).toEqual({ writes: false, table: null });
    expect(of("INSERT OR IGNORE INTO t (a) VALUES (?)")).toEqual({ writes: true, table: "*" }); // a write, its table not told
  });
});

/** A write held for a COMMIT (runLater), with n arguments. */
const held = (sql: string, n: number, first = 0): Stmt => ({ sql, args: Array.from({ length: n }, (_, i) => first + i), mode: "run", later: true });

describe("writes held for a COMMIT", () => {
  test("one-row inserts of one statement in a row join into one, in order, up to JOINED_ROWS; anything else stays as it was", () => {
    const entry = "INSERT INTO journal (at, kind) VALUES (?, ?)";
    const other = "UPDATE notes SET value = ? WHERE key = ?";
    const joined = joinHeld([held(entry, 2, 0), held(entry, 2, 2), held(other, 2, 4), held(entry, 2, 6)]);
    expect(joined).toEqual([
      { sql: "INSERT INTO journal (at, kind) VALUES (?, ?), (?, ?)", args: [0, 1, 2, 3] },
      { sql: other, args: [4, 5] },
      { sql: entry, args: [6, 7] },
    ]);
    expect(translate(joined[0]!.sql).text).toBe("INSERT INTO journal (at, kind) VALUES ($1, $2), ($3, $4)");
    const many = joinHeld(Array.from({ length: JOINED_ROWS + 3 }, (_, i) => held(entry, 2, 2 * i)));
    expect(many.map((j) => j.args.length / 2)).toEqual([JOINED_ROWS, 3]);
    expect(many.flatMap((j) => j.args)).toEqual(Array.from({ length: 2 * (JOINED_ROWS + 3) }, (_, i) => i));
    // Not one row of placeholders: sent as it is, never joined.
    const literal = "INSERT INTO journal (at, kind) VALUES (?, 'x')";
    expect(joinHeld([held(literal, 1), held(literal, 1)]).map((j) => j.sql)).toEqual([literal, literal]);
  });
});

describe("TLS defaults", () => {
  test("no sslmode: prefer, as libpq does (Bun alone would use no TLS); a given sslmode stays", () => {
    expect(withTlsDefaults("postgres://u:pw@db.example/airlock")).toBe("postgres://u:pw@db.example/airlock?sslmode=prefer");
    expect(withTlsDefaults("postgres://u@db/a?application_name=x")).toBe("postgres://u@db/a?application_name=x&sslmode=prefer");
    for (const kept of ["postgres://u@db/a?sslmode=disable", "postgres://u@db/a?sslmode=verify-full&sslrootcert=/etc/ca.pem"]) expect(withTlsDefaults(kept)).toBe(kept);
  });

  test("a certificate check asked for is never silently skipped: NODE_TLS_REJECT_UNAUTHORIZED=0 refuses verify-ca/verify-full", () => {
    const was = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
    try {
      expect(() => withTlsDefaults("postgres://u:tls-pw@db/a?sslmode=verify-full")).toThrow(
        "cannot open store postgres://u:***@db/a?sslmode=verify-full: sslmode=verify-full asks for a certificate check, and NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment would turn it off; unset it",
      );
      expect(() => withTlsDefaults("postgres://u@db/a?sslmode=verify-ca")).toThrow("NODE_TLS_REJECT_UNAUTHORIZED=0");
      expect(withTlsDefaults("postgres://u@db/a?sslmode=require")).toBe("postgres://u@db/a?sslmode=require");
    } finally {
      if (was === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = was;
    }
  });
});

/** Every SQL string literal the domain (and the dashboard's sessions) hands to get/all/run. */
function domainStatements(): string[] {
  const files = [...new Bun.Glob("src/domain/**/*.ts").scanSync(ROOT), "src/mcp/dashboard.ts"];
  const out = new Set<string>();
  for (const f of files) {
    const text = readFileSync(join(ROOT, f), "utf8");
    // One or more string literals joined by +, across lines: a call's first argument, or a
    // constant the calls name (the journal's INSERT_ENTRY).
    for (const m of text.matchAll(/(?:\b(?:get|all|run|runLater)(?:<[^>]*>)?\(|\bconst [A-Z_]+ =)\s*((?:"(?:[^"\\]|\\.)*"\s*\+?\s*)+)/g)) {
      const sql = [...m[1]!.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((p) => JSON.parse(`"${p[1]}"`) as string).join("");
      if (/^(SELECT|INSERT|UPDATE|DELETE)\b/.test(sql)) out.add(sql);
    }
  }
  return [...out];
}

describePg("the domain's SQL on PostgreSQL", () => {
  test("every statement the domain writes is accepted by PostgreSQL against the migrated schema", async () => {
    const db = await freshDatabase();
    const store = await openPgStore(db.url);
    await store.close();
    const statements = domainStatements();
    expect(statements.length).toBeGreaterThan(80); // the extraction found them (104 when written)
    // The journal's entry, alone and as a batch of row bodies joins it at its COMMIT.
    const entry = statements.find((s) => s.startsWith("INSERT INTO journal ("));
    expect(entry).toBeDefined();
    statements.push(joinHeld([held(entry!, 6), held(entry!, 6), held(entry!, 6)])[0]!.sql);
    const refused: string[] = [];
    await withClient(db.url, async (sql) => {
      for (const [i, s] of statements.entries()) {
        const t = translate(s);
        try {
          // PREPARE parses, resolves every name against the schema and types every placeholder.
          await sql.unsafe(`PREPARE airlock_check_${i} AS ${t.returnsRevision ? t.runText : t.text}`);
          await sql.unsafe(`DEALLOCATE airlock_check_${i}`);
        } catch (err) {
          refused.push(`${s}\n  -> ${(err as Error).message}`);
        }
      }
    });
    await db.drop();
    expect(refused).toEqual([]);
  });
});

describePg("PostgreSQL store", () => {
  let db: { url: string; name: string; drop(): Promise<void> };
  let store: PgStore;
  beforeAll(async () => {
    db = await freshDatabase();
    store = await openPgStore(db.url);
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  test("commits a body, then runs its afterCommit hooks in order, then resolves with its value", async () => {
    const seen: string[] = [];
    const out = await store.tx(function* () {
      yield* run("INSERT INTO counters (name, value) VALUES (?, ?)", "commit", 7);
      store.afterCommit(
        () => seen.push("first"),
        () => seen.push("first undone"),
      );
      store.afterCommit(() => seen.push("second"));
      expect(seen).toEqual([]); // not before the COMMIT
      return "done";
    });
    expect(out).toBe("done");
    expect(seen).toEqual(["first", "second"]);
    // Committed: another connection sees it.
    const rows = await withClient(db.url, (sql) => sql.unsafe("SELECT value FROM counters WHERE name = 'commit'"));
    expect(rows.length).toBe(1);
  });

  test("afterCommit outside a transaction runs at once", () => {
    let ran = false;
    store.afterCommit(() => (ran = true));
    expect(ran).toBe(true);
  });

  test("a body that throws midway leaves nothing, and its orElse hooks run instead", async () => {
    const seen: string[] = [];
    const err = await failureOf(
      store.tx(function* () {
        yield* run("INSERT INTO notes (key, value, updated_at) VALUES (?, ?, ?)", "rolled-back", "x", 1);
        store.afterCommit(
          () => seen.push("done"),
          () => seen.push("orElse 1"),
        );
        store.afterCommit(
          () => seen.push("done"),
          () => seen.push("orElse 2"),
        );
        yield* run("INSERT INTO counters (name, value) VALUES (?, ?)", "rolled-back", 1);
        throw new Error("midway");
      }),
    );
    expect((err as Error).message).toBe("midway");
    expect(seen).toEqual(["orElse 1", "orElse 2"]);
    expect(await store.read(get("SELECT * FROM notes WHERE key = ?", "rolled-back"))).toBeNull();
    expect(await store.read(get("SELECT * FROM counters WHERE name = ?", "rolled-back"))).toBeNull();
  });

  test("last(): its writes take their values from the row it returned; a statement after it is refused before it is sent", async () => {
    const entry = (name: string) => entryFromRow(1, "counter.changed", name, {}, { data: `'{"value":' || value || ?`, args: [',"by":5}'] });
    const value = await store.tx(function* () {
      return (yield* last<{ value: number }>([entry("last-a")], "INSERT INTO counters (name, value) VALUES (?, ?) RETURNING value", "last-a", 5))!.value;
    });
    expect(value).toBe(5);
    expect(await store.read(all("SELECT kind, resource, data FROM journal WHERE resource = ?", "last-a"))).toEqual([{ kind: "counter.changed", resource: "last-a", data: '{"value":5,"by":5}' }]);
    const err = await failureOf(
      store.tx(function* () {
        yield* last([entry("last-b")], "INSERT INTO counters (name, value) VALUES (?, ?) RETURNING value", "last-b", 5);
        yield* run("INSERT INTO notes (key, value, updated_at) VALUES (?, ?, ?)", "after-last", "x", 1);
      }),
    );
    expect(err).toBeInstanceOf(AirlockError);
    expect((err as AirlockError).message).toContain("after a body's last");
    expect(await store.read(get("SELECT * FROM counters WHERE name = ?", "last-b"))).toBeNull();
    expect(await store.read(get("SELECT * FROM journal WHERE resource = ?", "last-b"))).toBeNull();
    expect(await store.read(get("SELECT * FROM notes WHERE key = ?", "after-last"))).toBeNull();
  });

  test("a failing statement is thrown into the body at its yield, so its finally runs, and rolls back", async () => {
    let cleanedUp = false;
    const err = await failureOf(
      store.tx(function* () {
        yield* run("INSERT INTO counters (name, value) VALUES (?, ?)", "dup", 1);
        try {
          yield* run("INSERT INTO counters (name, value) VALUES (?, ?)", "dup", 2);
        } finally {
          cleanedUp = true;
        }
      }),
    );
    expect((err as { errno?: string }).errno).toBe("23505"); // unique_violation, as the server said it
    expect(cleanedUp).toBe(true);
    expect(await store.read(get("SELECT * FROM counters WHERE name = ?", "dup"))).toBeNull();
    // The connection is fine afterwards.
    expect(await store.read(get<{ n: number }>("SELECT COUNT(*) AS n FROM counters WHERE name = ?", "dup"))).toEqual({ n: 0 });
  });

  test("a body that swallows a statement's error does not pass for committed", async () => {
    const seen: string[] = [];
    const err = await failureOf(
      store.tx(function* () {
        yield* run("INSERT INTO counters (name, value) VALUES (?, ?)", "swallowed", 1);
        store.afterCommit(
          () => seen.push("done"),
          () => seen.push("orElse"),
        );
        try {
          yield* run("INSERT INTO counters (name, value) VALUES (?, ?)", "swallowed", 2);
        } catch {
          // a body must not do this: PostgreSQL has aborted the transaction
        }
      }),
    );
    expect((err as AirlockError).code).toBe("internal");
    expect(seen).toEqual(["orElse"]);
    expect(await store.read(get("SELECT * FROM counters WHERE name = ?", "swallowed"))).toBeNull();
  });

  // Group commit (driver.ts): the bodies asked for while a transaction runs share the next one.
  describe("group commit", () => {
    /** A transaction that holds the connection ~50 ms, so the bodies asked for meanwhile gather. */
    const slow = () =>
      store.tx(function* () {
        yield* get("SELECT pg_sleep(0.05)");
        return (yield* get<{ x: string }>("SELECT txid_current()::text AS x"))!.x;
      });
    const txid = () =>
      store.tx(function* () {
        return (yield* get<{ x: string }>("SELECT txid_current()::text AS x"))!.x;
      });

    test("bodies asked for together run in one transaction; those asked for while it runs, in the next", async () => {
      const together = await Promise.all([slow(), txid(), txid()]);
      expect(new Set(together).size).toBe(1);
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const holder = store.tx(function* () {
        started(); // its transaction has begun: bodies asked for from now on gather for the next
        yield* get("SELECT pg_sleep(0.05)");
        return (yield* get<{ x: string }>("SELECT txid_current()::text AS x"))!.x;
      });
      await running;
      const later = await Promise.all([txid(), txid(), txid(), txid()]);
      expect(new Set(later).size).toBe(1);
      expect(later[0]).not.toBe(await holder);
      expect(later[0]).not.toBe(together[0]);
    });

    test("a body of a batch that fails undoes only itself; the others commit, each hook once", async () => {
      const seen: string[] = [];
      const write = (name: string, fail: "throws" | "swallows" | null) =>
        store.tx(function* () {
          yield* run("INSERT INTO counters (name, value) VALUES (?, ?)", name, 1);
          store.afterCommit(
            () => seen.push(`${name} done`),
            () => seen.push(`${name} orElse`),
          );
          if (fail === "throws") throw new AirlockError("invalid_argument", `${name} refused`);
          if (fail === "swallows") {
            try {
              yield* run("INSERT INTO counters (name, value) VALUES (?, ?)", name, 2);
            } catch {
              // a body must not do this: its savepoint is aborted
            }
          }
          return name;
        });
      const first = slow();
      const calls = [write("batch-a", null), write("batch-b", "throws"), write("batch-c", "swallows"), write("batch-d", null)];
      const outcomes = await Promise.all(calls.map((c) => c.then((v) => `ok ${v}`, (e: AirlockError) => `${e.code}: ${e.message}`)));
      await first;
      expect(outcomes[0]).toBe("ok batch-a");
      expect(outcomes[1]).toBe("invalid_argument: batch-b refused");
      expect(outcomes[2]).toStartWith("internal: ");
      expect(outcomes[3]).toBe("ok batch-d");
      expect(seen).toEqual(["batch-b orElse", "batch-c orElse", "batch-a done", "batch-d done"]);
      const rows = await store.read(all<{ name: string }>("SELECT name FROM counters WHERE name LIKE 'batch-%' ORDER BY name"));
      expect(rows.map((r) => r.name)).toEqual(["batch-a", "batch-d"]);
    });

    test("a held write (runLater) goes ahead of the next statement or with the COMMIT: its body reads it, an undone body's is gone, an earlier body's stays", async () => {
      const hold = (name: string) => runLater("INSERT INTO counters (name, value) VALUES (?, ?)", name, 1);
      const body = (fn: () => Tx<unknown>) => store.tx(fn).then((v) => `ok ${String(v)}`, (e: Error) => `failed: ${e.message}`);
      const first = slow();
      const outcomes = Promise.all([
        body(function* () {
          yield* hold("held-a"); // sent ahead of the next body's first statement, before its savepoint
        }),
        body(function* () {
          yield* hold("held-b");
          const own = yield* get<{ value: number }>("SELECT value FROM counters WHERE name = ?", "held-b");
          if (own?.value !== 1) return "did not read its own held write";
          throw new Error("b undone"); // what it sent is in its savepoint
        }),
        body(function* () {
          yield* hold("held-c");
          throw new Error("c undone"); // never sent
        }),
        body(function* () {
          yield* hold("held-d"); // not sent when the next body is undone
        }),
        body(function* () {
          throw new Error("e undone");
        }),
        body(function* () {
          yield* hold("held-f"); // with d's, at the COMMIT
          return "f";
        }),
      ]);
      await first;
      expect(await outcomes).toEqual(["ok undefined", "failed: b undone", "failed: c undone", "ok undefined", "failed: e undone", "ok f"]);
      const rows = await store.read(all<{ name: string }>("SELECT name FROM counters WHERE name LIKE 'held-%' ORDER BY name"));
      expect(rows.map((r) => r.name)).toEqual(["held-a", "held-d", "held-f"]);
    });
  });

  test("runs transactions started together one after the other, never interleaved", async () => {
    await store.tx(function* () {
      yield* run("INSERT INTO counters (name, value) VALUES (?, 0)", "serial");
    });
    let inside = 0;
    let most = 0;
    const bump = (): Tx<void> =>
      (function* () {
        inside++;
        most = Math.max(most, inside);
        try {
          const row = yield* get<{ value: number }>("SELECT value FROM counters WHERE name = ?", "serial");
          yield* get("SELECT pg_sleep(0.002)");
          yield* run("UPDATE counters SET value = ? WHERE name = ?", row!.value + 1, "serial");
        } finally {
          inside--;
        }
      })();
    const N = 25;
    const reads: Promise<{ value: number } | null>[] = [];
    const txs: Promise<void>[] = [];
    for (let i = 0; i < N; i++) {
      txs.push(store.tx(bump));
      reads.push(store.read(get<{ value: number }>("SELECT value FROM counters WHERE name = ?", "serial")));
    }
    await Promise.all(txs);
    expect(most).toBe(1);
    expect(await store.read(get("SELECT value FROM counters WHERE name = ?", "serial"))).toEqual({ value: N });
    // A read queued after the i-th transaction sees exactly i + 1 increments: it ran in turn.
    expect((await Promise.all(reads)).map((r) => r!.value)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
  });

  test("hands back every integer as a number and text as text", async () => {
    const at = 1_767_225_600_123; // a millisecond timestamp, far past int4
    const out = await store.tx(function* () {
      yield* run("INSERT INTO notes (key, value, updated_at, expires_at) VALUES (?, ?, ?, ?)", "numeric-text", "123", at, at + 1);
      yield* run("INSERT INTO slots (token, pool, agent_id, weight, fence, acquired_at) VALUES (?, 'heavy', 'a', ?, 1, ?)", "w1", 2, at);
      yield* run("INSERT INTO slots (token, pool, agent_id, weight, fence, acquired_at) VALUES (?, 'heavy', 'b', ?, 2, ?)", "w2", 3, at);
      const task = yield* get<{ id: number }>(
        "INSERT INTO tasks (queue, payload, priority, state, created_at) VALUES (?, ?, 0, 'pending', ?) RETURNING id",
        "q",
        "{}",
        at,
      );
      const journal = yield* run("INSERT INTO journal (at, kind, resource) VALUES (?, ?, ?)", at, "note.set", "numeric-text");
      const updated = yield* run("UPDATE slots SET expires_at = ? WHERE pool = 'heavy'", at + 5);
      return { task, journal, updated };
    });
    expect(out.task!.id).toBeNumber();
    expect(out.journal.lastInsertRowid).toBeNumber();
    expect(out.journal.lastInsertRowid).toBeGreaterThan(0);
    expect(out.updated).toEqual({ changes: 2, lastInsertRowid: 0 });

    const note = await store.read(get<Record<string, unknown>>("SELECT * FROM notes WHERE key = ?", "numeric-text"));
    expect(note).toEqual({ key: "numeric-text", value: "123", author: null, updated_at: at, expires_at: at + 1 });
    expect(Object.getPrototypeOf(note)).toBe(Object.prototype);
    const agg = await store.read(
      get<Record<string, unknown>>("SELECT COUNT(*) AS n, SUM(weight) AS total, MAX(acquired_at) AS latest, MIN(fence) AS first FROM slots WHERE pool = ?", "heavy"),
    );
    expect(agg).toEqual({ n: 2, total: 5, latest: at, first: 1 });
    const rev = await store.read(get<{ r: number }>("SELECT MAX(revision) AS r FROM journal"));
    expect(rev).toEqual({ r: out.journal.lastInsertRowid as number });
    const slots = await store.read(all<Record<string, unknown>>("SELECT weight, pid FROM slots WHERE pool = ? ORDER BY acquired_at, rowid", "heavy"));
    expect(slots).toEqual([
      { weight: 2, pid: null },
      { weight: 3, pid: null },
    ]);
    expect(await store.read(get("SELECT SUM(weight) AS n FROM slots WHERE pool = ?", "nobody"))).toEqual({ n: null });
  });

  test("binds thirteen placeholders in order", async () => {
    // Ten in the row, three more in the update a second run takes.
    const args = ["req-13", "slot", '["heavy"]', "agent-13", "{}", 77, 1_767_225_599_000, false, "d-13", 1_767_225_600_000, 78, 1_767_225_599_001, "d-14"] as const;
    const upsert = () =>
      store.tx(function* () {
        yield* run(
          "INSERT INTO waiters (token, queue, keys, agent_id, req, ord, since, attached, daemon, grace_ends) " +
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(token) DO UPDATE SET ord = ?, since = ?, daemon = ?",
          ...args,
        );
      });
    const read = () => store.read(get<Record<string, unknown>>("SELECT token, queue, keys, agent_id, req, ord, since, attached, daemon, grace_ends FROM waiters WHERE token = ?", "req-13"));
    await upsert();
    const row = {
      token: "req-13",
      queue: "slot",
      keys: '["heavy"]',
      agent_id: "agent-13",
      req: "{}",
      ord: 77,
      since: 1_767_225_599_000,
      attached: false,
      daemon: "d-13",
      grace_ends: 1_767_225_600_000,
    };
    expect(await read()).toEqual(row);
    await upsert();
    expect(await read()).toEqual({ ...row, ord: 78, since: 1_767_225_599_001, daemon: "d-14" });
  });

  test("answers SQLite's table lookup from the current schema", async () => {
    const exists = (name: string) => store.read(get("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name));
    expect(await exists("journal")).not.toBeNull();
    expect(await exists("ui_sessions")).not.toBeNull();
    expect(await exists("no_such_table")).toBeNull();
  });

  test("runs the domain's upserts and its newest-entries query as SQLite does", async () => {
    const signal = () =>
      store.tx(function* () {
        return (yield* get<{ generation: number }>(
          "INSERT INTO events (name, generation) VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET generation = events.generation + 1 RETURNING generation",
          "ev",
        ))!.generation;
      });
    expect([await signal(), await signal(), await signal()]).toEqual([1, 2, 3]);
    const latest = await store.read(all<{ kind: string }>("SELECT * FROM (SELECT * FROM journal ORDER BY revision DESC LIMIT ?) AS tail ORDER BY revision", 1));
    expect(latest.map((e) => e.kind)).toEqual(["note.set"]);
  });

  test("durable() is null: a COMMIT that returned is durable", () => {
    expect(store.durable()).toBeNull();
  });
});

describePg("PostgreSQL migrations", () => {
  test("two stores opening a fresh database at once both succeed, and the schema is created once", async () => {
    const db = await freshDatabase();
    try {
      const [a, b] = await Promise.all([openPgStore(db.url), openPgStore(db.url)]);
      try {
        const versions = await a.read(all<{ version: number }>("SELECT version FROM airlock_schema"));
        expect(versions).toEqual([{ version: PG_MIGRATIONS.length }]);
        expect(await b.read(all("SELECT name FROM pools"))).toEqual([{ name: "heavy" }]);
      } finally {
        await a.close();
        await b.close();
      }
      // Opening again changes nothing.
      const c = await openPgStore(db.url);
      expect(await c.read(all("SELECT version FROM airlock_schema"))).toEqual([{ version: PG_MIGRATIONS.length }]);
      await c.close();
    } finally {
      await db.drop();
    }
  });

  test("a database with a newer schema version than this airlock is refused", async () => {
    const db = await freshDatabase();
    try {
      await (await openPgStore(db.url)).close();
      await withClient(db.url, (sql) => sql.unsafe("UPDATE airlock_schema SET version = 99"));
      const err = await failureOf(openPgStore(db.url));
      expect(err).toBeInstanceOf(AirlockError);
      expect((err as AirlockError).code).toBe("config");
      expect((err as AirlockError).message).toBe(
        `the database has schema version 99, newer than this airlock understands (${PG_MIGRATIONS.length}); upgrade airlock or use another --store`,
      );
    } finally {
      await db.drop();
    }
  });
});

describePg("PostgreSQL connection loss", () => {
  const isRetry = (err: unknown) =>
    err instanceof AirlockError && err.code === "unavailable" && err.message === "store unavailable: retry" && err.details?.retryable === true;

  test("a connection killed between calls: the next call fails with retry or succeeds, and a later one succeeds", async () => {
    await withStore(async (store, db) => {
      const bump = () =>
        store.tx(function* () {
          yield* run("INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET value = counters.value + 1", "n");
        });
      await bump();
      expect(await killBackends(db)).toBe(1);
      const next = await failureOf(bump());
      if (next !== null) expect(isRetry(next)).toBe(true);
      await bump();
      const n = await store.read(get<{ value: number }>("SELECT value FROM counters WHERE name = ?", "n"));
      expect(n!.value).toBe(next === null ? 3 : 2);
      // A read after another kill recovers the same way.
      await killBackends(db);
      const read = await failureOf(store.read(get("SELECT 1 AS one")));
      if (read !== null) expect(isRetry(read)).toBe(true);
      expect(await store.read(get("SELECT 1 AS one"))).toEqual({ one: 1 });
    });
  });

  test("a connection killed during a statement fails its transaction with retry and runs the orElse hooks", async () => {
    await withStore(async (store, db) => {
      const seen: string[] = [];
      const call = store.tx(function* () {
        yield* run("INSERT INTO counters (name, value) VALUES (?, 1)", "lost");
        store.afterCommit(
          () => seen.push("done"),
          () => seen.push("orElse"),
        );
        yield* get("SELECT pg_sleep(5)");
      });
      await waitForQuery(db, "SELECT pg_sleep(5)");
      await killBackends(db);
      const err = await failureOf(call);
      expect(isRetry(err)).toBe(true);
      expect(seen).toEqual(["orElse"]);
      expect(await retrying(() => store.read(get("SELECT * FROM counters WHERE name = ?", "lost")))).toBeNull();
    });
  });

  test("a connection killed during COMMIT says the outcome is unknown", async () => {
    await withStore(async (store, db) => {
      // A deferred trigger that sleeps holds the COMMIT open long enough to kill it.
      await withClient(db.url, (sql) =>
        sql.unsafe(`
          CREATE TABLE slow_commit (x BIGINT);
          CREATE FUNCTION slow_commit_fn() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(5); RETURN NULL; END $$;
          CREATE CONSTRAINT TRIGGER slow_commit_t AFTER INSERT ON slow_commit DEFERRABLE INITIALLY DEFERRED
            FOR EACH ROW EXECUTE FUNCTION slow_commit_fn();
        `),
      );
      const call = store.tx(function* () {
        yield* run("INSERT INTO slow_commit (x) VALUES (?)", 1);
      });
      await waitForQuery(db, "COMMIT");
      await killBackends(db);
      const err = await failureOf(call);
      expect(err).toBeInstanceOf(AirlockError);
      expect((err as AirlockError).code).toBe("unavailable");
      expect((err as AirlockError).message).toBe("store unavailable: the outcome of this call is unknown; check before retrying");
      expect((err as AirlockError).details).toEqual({ retryable: true, outcome: "unknown" });
      expect(await retrying(() => store.read(all("SELECT * FROM slow_commit")))).toEqual([]);
    });
  });

  test("while the server refuses connections, calls fail fast with retry, backing off, then recover", async () => {
    await withStore(async (store, db) => {
      await withClient(adminUrl(db), (sql) => sql.unsafe(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`));
      await killBackends(db);
      // The first call may find the dead connection, the second at the latest tries a new one.
      expect(isRetry(await failureOf(store.read(get("SELECT 1"))))).toBe(true);
      expect(isRetry(await failureOf(store.read(get("SELECT 1"))))).toBe(true);
      const refusedAt = Date.now();
      await withClient(adminUrl(db), (sql) => sql.unsafe(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`));
      // Within the backoff (100 ms after a first refusal) no attempt is made, even though the
      // server would take one now.
      const fast = await failureOf(store.read(get("SELECT 1")));
      if (Date.now() - refusedAt < 90) expect(isRetry(fast)).toBe(true);
      await Bun.sleep(250);
      expect(await store.read(get("SELECT 1 AS one"))).toEqual({ one: 1 });
    });
  });

  test("close() lets queued bodies finish, then refuses new ones", async () => {
    const db = await freshDatabase();
    try {
      const store = await openPgStore(db.url);
      const queued = store.tx(function* () {
        yield* get("SELECT pg_sleep(0.05)");
        return "finished";
      });
      await store.close();
      expect(await queued).toBe("finished");
      const err = await failureOf(store.read(get("SELECT 1")));
      expect((err as AirlockError).code).toBe("unavailable");
    } finally {
      await db.drop();
    }
  });
});

/** The test server's maintenance database, to act on db from outside it. */
function adminUrl(db: { url: string }): string {
  const u = new URL(db.url);
  u.pathname = "/postgres";
  return u.toString();
}

/** Waits until the store's backend is running the given statement. */
async function waitForQuery(db: { url: string; name: string }, query: string): Promise<void> {
  await withClient(adminUrl(db), async (sql) => {
    const deadline = performance.now() + 10_000; // seconds, for a loaded machine
    while (performance.now() < deadline) {
      const rows = await sql.unsafe("SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND query = $2", [db.name, query]);
      if (rows.length > 0) return;
      await Bun.sleep(10);
    }
    throw new Error(`the store never ran ${query}`);
  });
}

/** Retries a call the store answered with "retry" (it is reconnecting), as a client would. */
async function retrying<T>(call: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof AirlockError && err.details?.retryable) || i >= 50) throw err;
      await Bun.sleep(100);
    }
  }
}
