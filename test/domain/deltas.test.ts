// A catch-up by deltas on a shared store (docs/cluster.md, "Catch-up by deltas"), with two
// kernels of their own on one PostgreSQL database (AIRLOCK_TEST_PG; skipped without it): the
// path index, the working trees and the waiter lines of one daemon follow the other's claims,
// renewals, releases, reports and places in line by reading only the rows and the deleted keys
// above the row version it applied, and its lock timers re-arm only the locks stamped above it
// (a row body's write among them). A seeded random run checks that what the two daemons show
// (lines, holders, claims) stays the same as each catches up the other's changes by deltas,
// and the same as a third daemon that reads everything whole.
// What proves that only those are read: a change made with the stamping trigger switched off
// (so it carries no new row version) is not seen by a delta, and is seen by the next catch-up
// that has to read the table whole (the deleted keys trimmed past what it applied).
import { afterEach, expect, test } from "bun:test";
import { seeded } from "../helpers/cluster.ts";
import { ManualClock } from "../../src/domain/clock.ts";
import { createKernel, type Kernel } from "../../src/domain/kernel.ts";
import { openPgStore } from "../../src/store/pg/index.ts";
import { pure } from "../../src/store/tx.ts";
import { describePg, freshDatabase, withClient } from "../helpers/pg.ts";
import { until } from "../helpers/until.ts";

const START = Date.now();
/**
 * A read in the global order, which catches the daemon up first (list_locks no longer is one:
 * with no line moved it reads beside row bodies, ctx.readLines).
 */
const catchUp = (k: Kernel) => k.ctx.read(() => pure(undefined));
const R = "github.com/acme/app";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function setUp(): Promise<{ url: string; x: Kernel; y: Kernel; xClock: ManualClock; yClock: ManualClock; sql: (text: string) => Promise<unknown> }> {
  const db = await freshDatabase();
  cleanups.push(() => db.drop());
  const kernels: Kernel[] = [];
  const clocks: ManualClock[] = [];
  for (let i = 0; i < 2; i++) {
    const store = await openPgStore(db.url);
    const clock = new ManualClock(START);
    const kernel = await createKernel({ store, clock });
    cleanups.push(async () => {
      kernel.close();
      await store.close();
    });
    kernels.push(kernel);
    clocks.push(clock);
  }
  return { url: db.url, x: kernels[0]!, y: kernels[1]!, xClock: clocks[0]!, yClock: clocks[1]!, sql: (text) => withClient(db.url, (c) => c.unsafe(text)) };
}

/** What y's index says of a path: each conflict's holder, reason and expiry. */
async function seen(k: Kernel, path: string) {
  const r = await k.paths.check({ paths: [path], room: R, agentId: "checker" });
  return r.conflicts.map((c) => [c.heldBy, c.reason, c.expiresAt]);
}

describePg("a catch-up by deltas", () => {
  test("the path index reads only the claims and released keys above what it applied; a whole read when the deleted keys were trimmed past it", async () => {
    const { x, y, sql } = await setUp();
    const tokens: string[] = [];
    for (let a = 0; a < 8; a++) {
      const r = await x.paths.claim({ agentId: `agent-${a}`, paths: [`svc${a}/**`], room: R, ttlMs: 600_000, reason: "first" });
      if (!r.granted) throw new Error("expected a grant");
      tokens.push(r.token);
    }
    const expiry = START + 600_000;
    expect(await seen(y, "svc2/a.ts")).toEqual([["agent-2", "first", expiry]]); // y's first catch-up reads everything

    // A change that carries no new row version: only a whole read can see it.
    await sql(`ALTER TABLE path_claims DISABLE TRIGGER path_claims_stamp; UPDATE path_claims SET reason = 'unstamped' WHERE token = '${tokens[2]}'; ALTER TABLE path_claims ENABLE TRIGGER path_claims_stamp`);
    expect((await x.paths.renew(tokens[3]!, 900_000)).renewed).toBe(true);
    expect(await x.paths.release(tokens[5]!)).toBe(true);
    expect(await x.paths.claim({ agentId: "agent-x", paths: ["docs/**"], room: R, ttlMs: 600_000, reason: "new" })).toMatchObject({ granted: true });

    expect(await seen(y, "docs/a.md")).toEqual([["agent-x", "new", expiry]]);
    expect(await seen(y, "svc3/a.ts")).toEqual([["agent-3", "first", START + 900_000]]);
    expect(await seen(y, "svc5/a.ts")).toEqual([]);
    expect(await seen(y, "svc2/a.ts")).toEqual([["agent-2", "first", expiry]]); // the delta did not read it

    // The deleted keys trimmed past what y applied (up to this release's): its next catch-up
    // cannot trust them, and reads the table whole.
    expect(await x.paths.release(tokens[6]!)).toBe(true);
    await sql("UPDATE airlock_sync SET gone_floor = (SELECT last_value FROM airlock_row_ver)");
    expect(await seen(y, "svc6/a.ts")).toEqual([]);
    expect(await seen(y, "svc2/a.ts")).toEqual([["agent-2", "unstamped", expiry]]);

    // The next version's bump trims the keys at or below the floor (the two releases' keys).
    const kept = () => sql("SELECT count(*)::int AS n FROM airlock_gone WHERE ver <= (SELECT gone_floor FROM airlock_sync)");
    expect(await kept()).toEqual([{ n: 2 }]);
    expect((await x.paths.renew(tokens[0]!, 600_000)).renewed).toBe(true);
    expect(await kept()).toEqual([{ n: 0 }]);
  });

  test("the working trees read only the reports and dropped keys above what they applied", async () => {
    const { x, y, sql } = await setUp();
    for (const a of ["A", "B", "C"]) await x.worktrees.report({ agentId: a, room: R, branch: `feat-${a}`, dirty: [`src/${a}.ts`], touched: [`src/${a}.ts`] });
    const who = (p: string) => y.worktrees.editedBy(R, [p], "checker").map((e) => [e.agentId, e.branch]);
    await y.paths.check({ paths: ["x"], room: R }); // a transaction on y: its first catch-up, in full
    expect(who("src/A.ts")).toEqual([["A", "feat-A"]]);

    await sql(`ALTER TABLE worktrees DISABLE TRIGGER worktrees_stamp; UPDATE worktrees SET branch = 'unstamped' WHERE agent_id = 'A'; ALTER TABLE worktrees ENABLE TRIGGER worktrees_stamp`);
    await sql("DELETE FROM worktrees WHERE agent_id = 'C'"); // its key is kept, as any delete's
    await x.worktrees.report({ agentId: "B", room: R, branch: "feat-B2", dirty: ["src/B2.ts"], touched: ["src/B2.ts"] });

    await y.paths.check({ paths: ["x"], room: R });
    expect(who("src/B2.ts")).toEqual([["B", "feat-B2"]]);
    expect(who("src/B.ts")).toEqual([]);
    expect(who("src/C.ts")).toEqual([]);
    expect(who("src/A.ts")).toEqual([["A", "feat-A"]]); // the delta did not read it

    // Deleted keys trimmed past y's horizon (the trim's floor moved above it): y's next look
    // cannot trust its delta, and reads the reports whole; B's report goes there too.
    await sql("DELETE FROM worktrees WHERE agent_id = 'B'");
    await sql("DELETE FROM airlock_gone WHERE tbl = 'worktrees'; UPDATE airlock_sync SET gone_xfloor = pg_current_xact_id()");
    await y.paths.check({ paths: ["x"], room: R });
    expect(who("src/B2.ts")).toEqual([]);
    expect(who("src/A.ts")).toEqual([["A", "unstamped"]]); // read whole: the row as it is
  });

  test("a working-tree report that changes nothing is a row body (no version moves): the other daemon takes in its new expiry when the old one comes, and the report lapses once, at the last", async () => {
    const { x, y, xClock, yClock, sql } = await setUp();
    const HOUR = 3600_000;
    const report = () => x.worktrees.report({ agentId: "A", room: R, branch: "feat-A", dirty: ["src/a.ts"], touched: ["src/a.ts"] });
    const version = async () => ((await sql("SELECT version FROM airlock_sync WHERE id = 1")) as { version: string }[])[0]!.version;
    const who = () => y.worktrees.editedBy(R, ["src/a.ts"], "checker").map((e) => e.agentId);
    const dropped = async () => (await y.journal.since(0)).filter((e) => e.kind === "worktree.dropped").length;
    const both = (ms: number) => {
      xClock.advance(ms);
      yClock.advance(ms);
    };
    await report(); // the first: a row body, as every report that finds the row as memory says
    await y.paths.check({ paths: ["x"], room: R }); // y's index takes it in
    expect(who()).toEqual(["A"]);

    const before = await version();
    both(HOUR);
    await report(); // the same tree an hour on: only its times move
    await report();
    expect(await version()).toBe(before);

    // Past the first report's expiry (2 h): y's timer finds the row refreshed and takes in its
    // expiry; the report is live on both, and nothing was dropped.
    both(HOUR + 1000);
    await y.paths.check({ paths: ["x"], room: R });
    expect(who()).toEqual(["A"]);
    expect(await dropped()).toBe(0);

    // A changed report is a row body too (docs/cluster.md, "Working-tree reports beside the
    // order"): no version moves, and y's next check reads it by its delta by horizon.
    await x.worktrees.report({ agentId: "A", room: R, branch: "feat-A", dirty: ["src/a.ts", "src/b.ts"], touched: ["src/b.ts"] });
    expect(await version()).toBe(before);
    await y.paths.check({ paths: ["x"], room: R });
    expect(y.worktrees.editedBy(R, ["src/b.ts"], "checker").map((e) => e.agentId)).toEqual(["A"]);

    // Nobody reports for two hours: it lapses on whichever daemon gets there first, once.
    both(2 * HOUR + 1000);
    await until("the report dropped", async () => (await dropped()) === 1, 10_000);
    await y.paths.check({ paths: ["x"], room: R });
    expect(who()).toEqual([]);
    await x.paths.check({ paths: ["x"], room: R });
    expect(await dropped()).toBe(1);
  });

  test("the waiter lines read only the places and left tokens above what they applied; a whole read when the left tokens were trimmed past it", async () => {
    const { x, y, sql } = await setUp();
    const line = async (k: Kernel) => ((await k.pools.list()).find((p) => p.pool === "p")?.waiters ?? []).map((w) => w.agentId);
    await x.pools.configure({ pool: "p", capacity: 1, expectedVersion: 0, author: "t", reason: "r" });
    expect(await x.pools.acquire({ agentId: "A", pool: "p", waitMs: 0, ttlMs: 3600_000 })).toMatchObject({ granted: true });
    const tokens = new Map<string, string>();
    for (const a of ["B", "C", "D"]) {
      const r = await x.pools.acquire({ agentId: a, pool: "p", waitMs: 0 });
      if (r.granted || r.wakeToken === undefined) throw new Error(`${a} must queue behind A, with a wake_token`);
      tokens.set(a, r.wakeToken);
    }
    expect(await line(y)).toEqual(["B", "C", "D"]); // y's first catch-up reads every place

    // A change that carries no new row version: only a whole read can see it.
    await sql(`ALTER TABLE waiters DISABLE TRIGGER waiters_stamp; UPDATE waiters SET agent_id = 'unstamped' WHERE token = '${tokens.get("B")}'; ALTER TABLE waiters ENABLE TRIGGER waiters_stamp`);
    await x.presence.unregister("C"); // C's place leaves
    expect(await x.pools.acquire({ agentId: "E", pool: "p", waitMs: 0 })).toMatchObject({ granted: false, position: 3 });
    expect(await line(y)).toEqual(["B", "D", "E"]); // the delta did not read B's row

    // The left tokens trimmed past what y applied: its next catch-up reads the lines whole.
    await x.presence.unregister("D");
    await sql("UPDATE airlock_sync SET gone_floor = (SELECT last_value FROM airlock_row_ver)");
    expect(await line(y)).toEqual(["unstamped", "E"]);
    expect(await line(x)).toEqual(["B", "E"]); // x's memory was never reread
  });

  test("the lock timers re-arm only the locks stamped above what they applied, a row body's lock among them", async () => {
    const { x, y, yClock, sql } = await setUp();
    const expired = async () => (await y.journal.since(0)).filter((e) => e.kind === "lock.expired").map((e) => e.resource);
    expect(await x.locks.acquire({ name: "L1", agentId: "A", ttlMs: 60_000, waitMs: 0 })).toMatchObject({ locked: true }); // a row body: no version moves
    expect(await x.locks.acquireMany({ names: ["G0"], agentId: "C", ttlMs: 600_000 })).toMatchObject({ locked: true }); // a line body: the version names locks
    await catchUp(y); // L1's expiry armed at +60 s
    expect((await y.locks.list()).map((l) => l.name)).toEqual(["G0", "L1"]);

    // An expiry moved to +10 s with no new row version: only a whole read can see it.
    await sql("ALTER TABLE locks DISABLE TRIGGER locks_stamp; UPDATE locks SET expires_at = expires_at - 50000 WHERE name = 'L1'; ALTER TABLE locks ENABLE TRIGGER locks_stamp");
    expect(await x.locks.acquire({ name: "R2", agentId: "B", ttlMs: 30_000, waitMs: 0 })).toMatchObject({ locked: true });
    expect(await x.locks.acquireMany({ names: ["G"], agentId: "C", ttlMs: 600_000 })).toMatchObject({ locked: true });
    await catchUp(y); // the delta holds R2 and G, not L1

    // Timers fire in deadline order: had y armed L1 at +10 s, it would expire before R2 (+30 s).
    yClock.advance(30_000);
    await until("R2 expired on y", async () => (await expired()).includes("R2"), 10_000);
    expect(await expired()).toEqual(["R2"]);

    // The deleted keys trimmed past what y applied: its next catch-up that names locks reads them whole.
    await sql("UPDATE airlock_sync SET gone_floor = (SELECT last_value FROM airlock_row_ver)");
    expect(await x.locks.acquireMany({ names: ["G2"], agentId: "C", ttlMs: 600_000 })).toMatchObject({ locked: true });
    await catchUp(y);
    yClock.advance(1);
    await until("L1 expired on y", async () => (await expired()).includes("L1"), 10_000);
    expect(await expired()).toEqual(["R2", "L1"]);
  });

  // A daemon coming or going used to make every daemon reread every table whole (docs/cluster.md,
  // "A daemon coming or going"); now each cache reads its delta, which holds the rows another
  // daemon's row bodies stamped: the locks a daemon that died took with nobody in line.
  test("a daemon leaving has the others catch up at once by deltas: a lock taken by a row body is armed there, a change with no row version is not read", async () => {
    const { x, y, yClock, sql } = await setUp();
    const expired = async () => (await y.journal.since(0)).filter((e) => e.kind === "lock.expired").map((e) => e.resource);
    // A third daemon, alive (its heartbeat ahead by a minute, so nothing makes it dead meanwhile).
    await sql("INSERT INTO daemons (id, host, pid, started_at, seen_at) VALUES ('ghost', 'elsewhere', 1, 0, (extract(epoch from clock_timestamp()) * 1000)::bigint + 60000)");
    expect(await x.locks.acquireMany({ names: ["L0"], agentId: "C", ttlMs: 600_000 })).toMatchObject({ locked: true }); // a line body: the version names locks
    await catchUp(y); // L0's expiry armed at +600 s
    expect((await y.locks.list()).map((l) => l.name)).toEqual(["L0"]);
    expect(await x.locks.acquire({ name: "R2", agentId: "B", ttlMs: 30_000, waitMs: 0 })).toMatchObject({ locked: true }); // a row body: no version moves
    // L0's expiry moved to +10 s with no new row version: only a whole read can see it.
    await sql("ALTER TABLE locks DISABLE TRIGGER locks_stamp; UPDATE locks SET expires_at = expires_at - 590000 WHERE name = 'L0'; ALTER TABLE locks ENABLE TRIGGER locks_stamp");
    expect(y.ctx.scheduler.has("lock:R2")).toBe(false);
    await Bun.sleep(1_500); // y's heartbeat has seen the ghost alive (its coming runs nothing)
    expect(y.ctx.scheduler.has("lock:R2")).toBe(false);

    // The ghost leaves: y catches up at its next heartbeat, with no call of its own, by deltas.
    await sql("DELETE FROM daemons WHERE id = 'ghost'");
    await until("R2 armed on y", () => y.ctx.scheduler.has("lock:R2"), 5_000);
    // Timers fire in deadline order: had y read the locks whole, L0 (+10 s) would expire before R2 (+30 s).
    yClock.advance(30_000);
    await until("R2 expired on y", async () => (await expired()).includes("R2"), 10_000);
    expect(await expired()).toEqual(["R2"]);
  });

  test("seeded random calls on two daemons: each shows what the other does, and what a daemon that reads everything whole shows", async () => {
    const { url, x, y } = await setUp();
    const rnd = seeded("catch-up by deltas, random");
    const pick = <T>(xs: readonly T[]) => xs[rnd.int(xs.length)]!;
    const agents = ["a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"];
    const slots = new Map<string, string>(); // agent → slot token
    const wake = new Map<string, string>(); // agent → its place's wake_token
    const claims = new Map<string, string>(); // agent → claim token
    await x.pools.configure({ pool: "p", capacity: 2, expectedVersion: 0, author: "t", reason: "r" });
    // check_paths first, before any read in the global order catches the daemon up: on a shared
    // store it is a row body that brings the path index up to the rows itself (docs/cluster.md).
    const probes = ["src/api/x.ts", "src/b.ts", "docs/a.md", "test/t.ts", "lib/z.ts"];
    const view = async (k: Kernel) => ({
      checks: await Promise.all(probes.map(async (p) => (await k.paths.check({ paths: [p], room: R, agentId: "checker" })).conflicts.map((c) => [c.heldBy, c.heldPath]).sort())),
      pool: ((await k.pools.list()).find((p) => p.pool === "p")?.waiters ?? []).map((w) => [w.agentId, w.state, w.weight]),
      holders: ((await k.pools.list()).find((p) => p.pool === "p")?.holders ?? []).map((h) => h.agentId).sort(),
      locks: (await k.locks.list()).map((l) => [l.name, l.agent_id, l.fence]),
      claims: (await k.paths.list(R)).map((c) => [c.agentId, c.paths.join(","), c.fence]).sort(),
    });
    for (let step = 0; step < 120; step++) {
      const k = rnd.next() < 0.5 ? x : y;
      const a = pick(agents);
      const op = rnd.int(7);
      const what = `step ${step} (seed ${rnd.seed}): op ${op} by ${a} on ${k === x ? "x" : "y"}`;
      if (op <= 1) {
        // A slot: a new place in line, a poll of the place (taken over by this daemon), or a grant.
        const weight = 1 + rnd.int(2); // drawn every time, so a replay draws the same numbers
        const r = await k.pools.acquire({ agentId: a, pool: "p", waitMs: 0, ttlMs: 3600_000, ...(wake.has(a) ? { wakeToken: wake.get(a) } : { weight }) });
        if (r.granted) {
          slots.set(a, r.token);
          wake.delete(a);
        } else if (r.wakeToken !== undefined) wake.set(a, r.wakeToken);
      } else if (op === 2 && slots.has(a)) {
        expect(await k.pools.release(slots.get(a)!)).toBe(true);
        slots.delete(a);
      } else if (op === 3) {
        await k.presence.unregister(a); // its places leave, its slot, locks and claims go
        slots.delete(a);
        wake.delete(a);
        claims.delete(a);
      } else if (op === 4) {
        const name = pick(["L0", "L1", "L2"]);
        const r = await k.locks.acquire({ name, agentId: a, ttlMs: 3600_000, waitMs: 0 });
        if (r.locked && rnd.next() < 0.5) expect(await k.locks.release(name, r.token, undefined)).toBe(true);
      } else if (op === 5) {
        await k.locks.acquireMany({ names: [pick(["L0", "L1", "L2"]), pick(["G0", "G1"])], agentId: a, ttlMs: 3600_000 });
      } else if (claims.has(a)) {
        expect(await k.paths.release(claims.get(a)!)).toBe(true);
        claims.delete(a);
      } else {
        const r = await k.paths.claim({ agentId: a, paths: [pick(["src/**", "src/api/**", "docs/*.md", "test/**", "src/api/x.ts"])], room: R, ttlMs: 3600_000 });
        if (r.granted) claims.set(a, r.token);
      }
      const [vx, vy] = [await view(x), await view(y)];
      expect({ what, ...vy }).toEqual({ what, ...vx });
    }
    // A daemon that starts now reads every row whole: it shows the same.
    const store = await openPgStore(url);
    const z = await createKernel({ store, clock: new ManualClock(START) });
    cleanups.push(async () => {
      z.close();
      await store.close();
    });
    expect(await view(z)).toEqual(await view(x));
    expect(await view(y)).toEqual(await view(x));
  });
});
