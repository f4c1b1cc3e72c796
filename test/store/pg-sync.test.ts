// The cluster version protocol (src/domain/cluster-sync.ts, run by src/store/pg/) between two stores on one database, each
// attached as a daemon would attach it: what one commits reaches the other's next transaction
// as a catch-up naming the tables it wrote, and nothing else does. The hooks are the domain's
// side of the seam (src/domain/cluster.ts implements them); here they only record the calls.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { VersionSync } from "../../src/domain/cluster-sync.ts";
import { FLIGHT_FRESH_MS } from "../../src/store/pg/statement.ts";
import { openPgStore, type PgStore } from "../../src/store/pg/index.ts";
import type { ClusterHooks } from "../../src/store/store.ts";
import { AirlockError } from "../../src/errors.ts";
import { all, gather, get, last, reading, run } from "../../src/store/tx.ts";
import { describePg, freshDatabase, withClient } from "../helpers/pg.ts";
import { until } from "../helpers/until.ts";
import { rowBatchHolder } from "../helpers/cluster.ts";

/** Hooks that record each catch-up's tables (sorted; null: reread everything). */
function recorder() {
  const calls: (string[] | null)[] = [];
  // concerned: the daemons whose places or grants this store's flush says it wrote (twoStores: the other store).
  const state = { flushWrites: false, waiting: false, concerned: [] as string[] };
  const hooks: ClusterHooks = {
    *catchUp(changed) {
      calls.push(changed === null ? null : [...changed].sort());
    },
    *freshen() {},
    readAhead: () => [],
    *flush() {
      const wrote = state.flushWrites;
      state.flushWrites = false;
      return wrote;
    },
    forget() {},
    waiting: () => state.waiting, // false: a NOTIFY alone never triggers a catch-up, only the next call does
    watchingJournal: () => false,
    *journalWanted() {
      return false;
    },
    concernedDaemons: () => new Set(state.concerned),
  };
  return { calls, hooks, state };
}

/**
 * Two stores on one fresh database, each attached as a daemon would attach it, with recording
 * hooks; set up before the describe's tests and closed after them. `first` runs a transaction
 * on each (in that order), so each has seen where the shared state stands.
 */
function twoStores(first: ("a" | "b")[]) {
  const s = {
    db: undefined as unknown as { url: string; name: string; drop(): Promise<void> },
    a: undefined as unknown as PgStore,
    b: undefined as unknown as PgStore,
    ra: recorder(),
    rb: recorder(),
    /** a's protocol (whom it knows to hear their own channel: VersionSync.hearingOwn). */
    sa: undefined as unknown as VersionSync,
  };
  beforeAll(async () => {
    s.db = await freshDatabase();
    s.a = await openPgStore(s.db.url);
    s.b = await openPgStore(s.db.url);
    s.sa = new VersionSync(s.ra.hooks, s.a.shared.daemonId);
    await s.a.shared.attach(s.sa);
    await s.b.shared.attach(new VersionSync(s.rb.hooks, s.b.shared.daemonId));
    s.ra.state.concerned = [s.b.shared.daemonId];
    s.rb.state.concerned = [s.a.shared.daemonId];
    for (const which of first) await s[which].tx(function* () {});
  });
  afterAll(async () => {
    await s.a?.close();
    await s.b?.close();
    await s.db?.drop();
  });
  return s;
}

describePg("the cluster version protocol between two stores", () => {
  const s = twoStores(["b"]); // b has seen where the shared state stands
  const { ra, rb } = s;

  test("a store that just attached catches up in full, once", async () => {
    expect(rb.calls).toEqual([null]);
    await s.b.tx(function* () {});
    expect(rb.calls).toEqual([null]);
  });

  test("the other's commit reaches this store's next transaction, naming the tables it wrote", async () => {
    rb.calls.length = 0;
    await s.a.tx(function* () {
      yield* run("INSERT INTO counters (name, value) VALUES (?, ?)", "sync", 1);
      yield* run("INSERT INTO notes (key, value, updated_at) VALUES (?, ?, ?)", "sync", "v", 0);
    });
    await s.b.read((function* () {})()); // a read takes its turn in the global order, and catches up too
    expect(rb.calls).toEqual([["counters", "notes"]]);
    await s.b.tx(function* () {});
    expect(rb.calls).toEqual([["counters", "notes"]]);
  });

  test("a transaction that changed no row moves no version: the other does not catch up", async () => {
    rb.calls.length = 0;
    await s.a.tx(function* () {
      yield* run("DELETE FROM counters WHERE name = ?", "none");
      yield* run("UPDATE notes SET value = ? WHERE key = ?", "w", "none");
    });
    await s.b.tx(function* () {});
    expect(rb.calls).toEqual([]);
  });

  test("a flush that wrote with no table named by a statement makes the other reread everything", async () => {
    rb.calls.length = 0;
    ra.state.flushWrites = true;
    await s.a.tx(function* () {});
    await s.b.tx(function* () {});
    expect(rb.calls).toEqual([null]);
  });

  // A daemon with a call blocked used to catch up at once after every commit of every other
  // daemon; most of them cannot answer a blocked call (docs/cluster.md, "Watchers beside row
  // bodies"): those wait for this daemon's next transaction.
  test("with a call blocked here, another's commit is caught up with at once only when it wrote what answers one (the lines, the grants); otherwise at the next transaction", async () => {
    rb.calls.length = 0;
    rb.state.waiting = true;
    try {
      await s.a.tx(function* () {
        yield* run("INSERT INTO counters (name, value) VALUES (?, ?)", "not-a-line", 1);
      });
      await Bun.sleep(300); // its NOTIFY has reached b, which did nothing
      await s.a.tx(function* () {
        yield* run("INSERT INTO grants (token, daemon, queue, waiter, value) VALUES (?, ?, ?, ?, ?)", "sync-grant", "elsewhere", "locks", "{}", "true");
      });
      await until("b's catch-up after a grant was written", () => rb.calls.length > 0, 5_000);
      // One catch-up, at the grant's NOTIFY, reading both commits.
      expect(rb.calls).toEqual([["counters", "grants"]]);
      await s.b.tx(function* () {});
      expect(rb.calls).toEqual([["counters", "grants"]]);
    } finally {
      rb.state.waiting = false;
    }
  });

  test("with a call blocked here, another's change of only its own places in line waits for the next transaction; a change of another daemon's place is caught up with at once", async () => {
    rb.calls.length = 0;
    rb.state.waiting = true;
    const place = (token: string) =>
      s.a.tx(function* () {
        yield* run("INSERT INTO waiters (token, queue, keys, agent_id, req, ord, since, attached, daemon, grace_ends) VALUES (?, 'locks', '[\"x\"]', 'a', '{}', 1, 0, true, 'a', NULL)", token);
      });
    try {
      ra.state.concerned = []; // a's flush says: only a's own places
      await place("own-place");
      await Bun.sleep(300); // its NOTIFY has reached b, which did nothing
      expect(rb.calls).toEqual([]);
      ra.state.concerned = [s.b.shared.daemonId];
      await place("other-place");
      await until("b's catch-up after another daemon's place changed", () => rb.calls.length > 0, 5_000);
      expect(rb.calls).toEqual([["waiters"]]);
    } finally {
      rb.state.waiting = false;
      ra.state.concerned = [s.b.shared.daemonId];
    }
  });

  // With many daemons, each grant or place written used to wake every daemon with a call
  // blocked into a catch-up in the exclusive order (docs/cluster.md, "Who hears a NOTIFY").
  test("with a call blocked here, a grant or a place written for a third daemon waits for the next transaction; one that names this daemon among others is caught up with at once", async () => {
    rb.calls.length = 0;
    rb.state.waiting = true;
    const grant = (token: string) =>
      s.a.tx(function* () {
        yield* run("INSERT INTO grants (token, daemon, queue, waiter, value) VALUES (?, 'third', 'locks', '{}', 'true')", token);
      });
    try {
      ra.state.concerned = ["third"];
      await grant("for-a-third");
      await Bun.sleep(300); // its NOTIFY has reached b, which did nothing
      expect(rb.calls).toEqual([]);
      await s.b.tx(function* () {});
      expect(rb.calls).toEqual([["grants"]]);
      ra.state.concerned = ["third", s.b.shared.daemonId];
      await grant("for-both");
      await until("b's catch-up after a grant that names it", () => rb.calls.length > 1, 5_000);
      expect(rb.calls).toEqual([["grants"], ["grants"]]);
    } finally {
      rb.state.waiting = false;
      ra.state.concerned = [s.b.shared.daemonId];
    }
  });
});

// Each daemon hears a channel of its own (docs/cluster.md, "Who hears a NOTIFY"): what concerns
// one daemon alone goes there, and no other daemon is woken by it; a daemon whose heartbeat does
// not say it hears its own (one of an earlier release) is told on the channel everyone hears.
describePg("a daemon's own channel", () => {
  const s = twoStores(["a", "b"]);
  const { ra, rb } = s;

  test("what concerns this daemon alone comes on its own channel, heard by nobody else; for a daemon not known to hear its own, on everyone's", async () => {
    const b = s.b.shared.daemonId;
    const everyone: string[] = [];
    const listener = new SQL(s.db.url, { max: 1 });
    await listener.listen("airlock", (payload: string) => everyone.push(payload));
    const grant = (token: string) =>
      s.a.tx(function* () {
        yield* run("INSERT INTO grants (token, daemon, queue, waiter, value) VALUES (?, ?, 'locks', '{}', 'true')", token, b);
      });
    rb.calls.length = 0;
    rb.state.waiting = true;
    ra.state.concerned = [b];
    try {
      await until("a knows that b hears its own channel", async () => s.sa.hearingOwn.has(b), 5_000);
      await grant("to-b-alone");
      await until("b's catch-up after the grant", async () => rb.calls.length > 0, 5_000);
      await Bun.sleep(300); // what the channel everyone hears carried has arrived
      expect(everyone).toEqual([]);
      // As if b were of an earlier release: a does not know it hears its own channel.
      const known = s.sa.hearingOwn;
      s.sa.hearingOwn = new Set();
      try {
        await grant("to-b-everyone");
        await until("b's catch-up after the second grant", async () => rb.calls.length > 1, 5_000);
        await until("the NOTIFY on everyone's channel", async () => everyone.length > 0, 5_000);
        expect(everyone).toEqual([`${s.a.shared.daemonId} tables:grants to:${b}`]);
      } finally {
        s.sa.hearingOwn = known;
      }
    } finally {
      rb.state.waiting = false;
      await listener.close();
    }
  });
});

// Row bodies (docs/cluster.md, "Scaling out"): a batch of them takes the global order shared.
describePg("row bodies in the shared order", () => {
  const s = twoStores(["a", "b"]);
  const { rb } = s;

  /** A row body on `s` that holds its transaction open on the server, and says when it began. */
  function holding(s: PgStore, key: string, seconds: number) {
    let began!: () => void;
    const started = new Promise<void>((resolve) => (began = resolve));
    const done = s.tx(function* () {
      began();
      yield* run("INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = counters.value + 1", key);
      yield* get("SELECT pg_sleep(?)", seconds);
      return key;
    }, { key });
    return { started, done };
  }

  test("row bodies of two daemons overlap; a transaction in the global order waits for them", async () => {
    const order: string[] = [];
    const held = holding(s.a, "row-a", 1.5);
    await held.started;
    const heldDone = held.done.then(() => order.push("a's row body (1.5 s on the server)"));
    // b's row body on another row runs while a's is open, so it ends first.
    await s.b.tx(function* () {
      yield* run("INSERT INTO counters (name, value) VALUES (?, 1)", "row-b");
    }, { key: "row-b" });
    order.push("b's row body");
    // A transaction in the global order on b waits until a's row body has committed.
    const value = await s.b.tx(function* () {
      return (yield* get<{ value: number }>("SELECT value FROM counters WHERE name = ?", "row-a"))!.value;
    });
    order.push("b's transaction in the global order");
    await heldDone;
    expect(order).toEqual(["b's row body", "a's row body (1.5 s on the server)", "b's transaction in the global order"]);
    expect(value).toBe(1);
  });

  test("a batch of row bodies moves no version, so no other daemon is sent to catch up", async () => {
    const version = () => s.b.tx(function* () {
      return (yield* get<{ version: number }>("SELECT version FROM airlock_sync WHERE id = 1"))!.version;
    });
    const before = await version();
    rb.calls.length = 0;
    await Promise.all(["r1", "r2", "r3"].map((key) => s.a.tx(function* () {
      yield* run("INSERT INTO counters (name, value) VALUES (?, 1)", key);
    }, { key })));
    expect(await version()).toBe(before);
    expect(rb.calls).toEqual([]);
    // The same writes in the global order move it.
    await s.a.tx(function* () {
      yield* run("INSERT INTO counters (name, value) VALUES (?, 1)", "r4");
    });
    expect(await version()).toBe(before + 1);
    expect(rb.calls).toEqual([["counters"]]);
  });

  test("a row body of a batch that fails is answered with its error; the others run again and commit", async () => {
    const holder = holding(s.a, "row-hold-2", 0.2);
    await holder.started;
    const body = (key: string, fail: boolean) => s.a.tx(function* () {
      yield* run("INSERT INTO counters (name, value) VALUES (?, 1)", key);
      if (fail) throw new AirlockError("invalid_argument", `${key} refused`);
      return key;
    }, { key });
    const outcomes = await Promise.all([body("f1", false), body("f2", true), body("f3", false)].map((p) => p.then((v) => `ok ${v}`, (e: Error) => e.message)));
    await holder.done;
    expect(outcomes).toEqual(["ok f1", "f2 refused", "ok f3"]);
    const names = await s.b.tx(function* () {
      return (yield* all<{ name: string }>("SELECT name FROM counters WHERE name IN ('f1', 'f2', 'f3') ORDER BY name")).map((r) => r.name);
    });
    expect(names).toEqual(["f1", "f3"]);
  });

  test("a row body whose statement fails is the one refused; the others, whose statements it aborted, run again", async () => {
    const holder = holding(s.a, "row-hold-3", 0.2);
    await holder.started;
    const body = (key: string, fail: boolean) => s.a.tx(function* () {
      yield* run("INSERT INTO counters (name, value) VALUES (?, 1)", key);
      if (fail) yield* get("SELECT 1 / (? - 1) AS x", 1); // division by zero: the server aborts the transaction
      yield* run("UPDATE counters SET value = value + 1 WHERE name = ?", key);
      return key;
    }, { key });
    const outcomes = await Promise.all([body("s1", false), body("s2", true), body("s3", false)].map((p) => p.then((v) => `ok ${v}`, (e: Error) => `failed: ${e.message}`)));
    await holder.done;
    expect(outcomes[0]).toBe("ok s1");
    expect(outcomes[1]).toContain("division by zero");
    expect(outcomes[2]).toBe("ok s3");
    const rows = await s.b.tx(function* () {
      return yield* all<{ name: string; value: number }>("SELECT name, value FROM counters WHERE name IN ('s1', 's2', 's3') ORDER BY name");
    });
    expect(rows).toEqual([{ name: "s1", value: 2 }, { name: "s3", value: 2 }]);
  });

  test("row bodies of one batch run in the order of their keys, those of one key in the order asked", async () => {
    const ran: string[] = [];
    const holder = holding(s.a, "row-hold", 0.2);
    await holder.started;
    const body = (key: string, tag: string) => s.a.tx(function* () {
      ran.push(tag);
      yield* run("INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = counters.value + 1", key);
    }, { key });
    await Promise.all([body("k3", "k3"), body("k1", "k1 first"), body("k2", "k2"), body("k1", "k1 second"), holder.done]);
    expect(ran).toEqual(["k1 first", "k1 second", "k2", "k3"]);
  });

  // The server must receive them in that order too, whatever kind each first statement is: a
  // last() sent a moment before a plain statement that was asked first reversed two row locks,
  // and two daemons doing so in opposite orders deadlocked (two-daemons.test.ts, "opposite
  // orders"). A sequence numbers the statements as the server runs them.
  test("the server runs the first statements of a batch's row bodies in key order, plain, gathered or last()", async () => {
    await withClient(s.db.url, (sql) => sql.unsafe("CREATE SEQUENCE IF NOT EXISTS sent_order"));
    const holder = holding(s.a, "row-hold-order", 0.2);
    await holder.started;
    const kinds = ["plain", "last", "gather", "plain", "last", "last", "plain", "gather"] as const;
    const body = (i: number) => s.a.tx(function* () {
      const next = "SELECT nextval('sent_order') AS n";
      const kind = kinds[i]!;
      const row = kind === "last" ? yield* last<{ n: string }>([], next) : kind === "gather" ? (yield* gather(reading.all<{ n: string }>(next)))[0][0] : yield* get<{ n: string }>(next);
      return { key: `order-${i}`, n: Number(row!.n) };
    }, { key: `order-${i}` });
    // Asked in reverse: the batch sorts them.
    const got = await Promise.all(kinds.map((_, i) => body(kinds.length - 1 - i)));
    await holder.done;
    const byServer = [...got].sort((a, b) => a.n - b.n).map((r) => r.key);
    expect(byServer).toEqual(kinds.map((_, i) => `order-${i}`));
  });

  // A server restart between two calls costs no error: a row batch that finds its connection
  // dead at BEGIN (nothing of it ran) runs on a new one, as a line body does.
  // A batch's row bodies lock their rows in key order only as far as each locks with its first
  // statement: one that reads first (a line checked, the journal's count) sends its write after
  // those behind it, and another daemon's batch may then lock the same rows the other way round.
  // PostgreSQL ends one of the two; a batch of row bodies it ends runs again, whole.
  test("a batch of row bodies PostgreSQL ends to break a deadlock runs again: every body answered, none with the error", async () => {
    // Both rows there first: an UPDATE waits for a row another transaction locked, not for one it has yet to commit.
    await withClient(s.db.url, (sql) => sql`INSERT INTO counters (name, value) VALUES ('dl-a', 0), ('dl-b', 0)`);
    const holder = await rowBatchHolder(s.db.url);
    try {
      // The other side: a transaction in the shared order that holds dl-b, and will want dl-a.
      // Its own deadlock check waits 10 s, so the batch's (after the server's 1 s) finds the cycle.
      await holder.tx.unsafe("SET deadlock_timeout = '10s'");
      await holder.hold();
      await holder.tx.unsafe("UPDATE counters SET value = value + 100 WHERE name = 'dl-b'");
      // A batch in flight on b, so that the next two gather into one batch: dl-a, then dl-b.
      const first = holding(s.b, "dl-x", 0.3);
      await first.started;
      const bump = (key: string) => s.b.tx(() => run("INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = counters.value + 1", key), { key });
      const calls = [bump("dl-a"), bump("dl-b")].map((p) => p.then(() => "done", (err: unknown) => `refused: ${(err as Error).message}`));
      await first.done;
      // The batch holds dl-a and waits for dl-b; then the holder wants dl-a: a cycle.
      await until("the batch waiting for dl-b", async () => (await withClient(s.db.url, (sql) => sql`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`))[0].n > 0, 5_000);
      const wanted = holder.tx.unsafe("UPDATE counters SET value = value + 100 WHERE name = 'dl-a'");
      await wanted; // granted once the server ended the batch
      await holder.commit();
      expect(await Promise.all(calls)).toEqual(["done", "done"]);
      const values = await withClient(s.db.url, (sql) => sql`SELECT name, value::int AS value FROM counters WHERE name IN ('dl-a', 'dl-b') ORDER BY name`);
      expect(values.map((r: { name: string; value: number }) => [r.name, r.value])).toEqual([
        ["dl-a", 101],
        ["dl-b", 101],
      ]);
    } finally {
      await holder.close();
    }
  });

  test("a batch of row bodies on a connection the server ended since the last call runs on a new one: no error, written once", async () => {
    const bump = (key: string) => s.a.tx(function* () {
      return (yield* get<{ value: number }>("INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = counters.value + 1 RETURNING value", key))!.value;
    }, { key });
    expect(await bump("after-kill")).toBe(1);
    for (let round = 2; round <= 4; round++) {
      const ended = await withClient(s.db.url, (sql) =>
        sql.unsafe("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [s.db.name]),
      );
      expect(ended.length).toBeGreaterThan(0);
      // The batch of two rows (and one alone) each answers once, with the next value.
      expect(await Promise.all([bump("after-kill"), bump("after-kill-2")])).toEqual([round, round - 1]);
    }
  });

  // With its COMMIT in the same flight (last(): docs/cluster.md, "A row batch in one flight"), a
  // batch whose connection is lost may have run whole before it went: it is never run again.
  // Each call answers its value or says its outcome is unknown; the rows count each call once
  // at most, and every value answered is there.
  test("a batch that commits in its flight, on a connection the server ended: each call answered once or its outcome unknown, never applied twice", async () => {
    const bump = (key: string) =>
      s.a
        .tx(() => last<{ value: number }>([], "INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = counters.value + 1 RETURNING value", key), { key })
        .then(
          (r) => ({ value: r!.value }),
          (e: AirlockError) => ({ error: `${e.code}: ${e.message}` }),
        );
    expect(await bump("flight-kill")).toEqual({ value: 1 });
    const answered: number[] = [1];
    let calls = 1;
    const outcomes: string[] = [];
    for (let round = 0; round < 4; round++) {
      await s.a.tx(() => get("SELECT 1")); // on a live connection again (a waited BEGIN is retried)
      const ended = await withClient(s.db.url, (sql) =>
        sql.unsafe("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [s.db.name]),
      );
      expect(ended.length).toBeGreaterThan(0);
      const got = await Promise.all([bump("flight-kill"), bump("flight-kill"), bump("flight-kill-2")]);
      calls += 2;
      for (const g of got.slice(0, 2)) {
        outcomes.push("value" in g ? "answered" : g.error);
        if ("value" in g) answered.push(g.value);
        else expect(g.error).toMatch(/unknown|unavailable/);
      }
    }
    // Some went in their flight (the connection had just answered), so some outcome is unknown.
    expect(outcomes.filter((o) => o !== "answered").length).toBeGreaterThan(0);
    const stored = (await s.a.tx(() => get<{ value: number }>("SELECT value FROM counters WHERE name = ?", "flight-kill")))?.value ?? 0;
    expect(new Set(answered).size).toBe(answered.length);
    expect(stored).toBeLessThanOrEqual(calls);
    expect(stored).toBeGreaterThanOrEqual(Math.max(0, ...answered));
    // And the store is fine afterwards.
    expect(await bump("flight-kill")).toEqual({ value: stored + 1 });

    // A connection idle longer than FLIGHT_FRESH_MS is not trusted with a COMMIT in the flight:
    // one ended meanwhile costs no error (its batch found it dead at BEGIN and ran again).
    for (let round = 0; round < 2; round++) {
      await Bun.sleep(FLIGHT_FRESH_MS + 200);
      const ended = await withClient(s.db.url, (sql) =>
        sql.unsafe("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [s.db.name]),
      );
      expect(ended.length).toBeGreaterThan(0);
      expect(await Promise.all([bump("idle-kill"), bump("idle-kill")])).toEqual([{ value: 2 * round + 1 }, { value: 2 * round + 2 }]);
    }
  });
});

// A daemon coming or going used to make every other daemon forget where it stood and reread
// every table whole, at once (docs/cluster.md, "A daemon coming or going").
describePg("the daemons' liveness", () => {
  const s = twoStores(["a", "b"]);
  const { rb } = s;

  test("a daemon coming sends nobody to catch up, and the next transaction names daemons (a delta, not a reread of everything); one leaving has the others catch up at once, naming daemons", async () => {
    const before = rb.calls.length;
    const c = await openPgStore(s.db.url);
    let open = true;
    try {
      await c.shared.attach(new VersionSync(recorder().hooks, c.shared.daemonId));
      // Two of b's heartbeats (one a second) see c come; nothing runs on b.
      await Bun.sleep(2_500);
      expect(rb.calls.length).toBe(before);
      await s.b.tx(function* () {});
      expect(rb.calls.slice(before)).toEqual([["daemons"]]);
      // c stops (its row goes): b catches up at its next heartbeat, with no call of its own.
      await c.close();
      open = false;
      await until("b caught up after c left", () => rb.calls.length > before + 1, 5_000);
      expect(rb.calls.slice(before + 1)).toEqual([["daemons"]]);
    } finally {
      if (open) await c.close();
    }
  });
});
