// The status snapshot (`airlock/status`: `airlock status`, `airlock watch`, the dashboard) on
// daemons sharing a store (docs/cluster.md, "The status snapshot beside row bodies"). It used to
// be a transaction in the global order, so an open dashboard, asking again at every burst of
// changes, stopped every daemon's row bodies each time. Now it is read beside them when the
// daemon's lines are the stored ones: the traced daemon's snapshots, taken while the other
// changes counters, count no exclusive turn, and still show every change; a waiter that joins a
// line on the other daemon shows at once (that snapshot catches up in the global order first).
// The list tools (list_agents, list_locks, list_pools, list_tasks, list_path_claims) read the
// same way.
// Its journal tail stops before a revision a writer holds in flight (so a dashboard that follows
// the feed from the snapshot's revision misses nothing), shows it once committed, and passes a
// rollback's gap for good. Skipped without a server (AIRLOCK_TEST_PG).
import { expect, setDefaultTimeout, test } from "bun:test";
import { type DaemonProcess, storeQuery } from "../helpers/daemon.ts";
import { answered, ordersOfTracedPair, rowBatchHolder, useCluster } from "../helpers/cluster.ts";
import { describePg } from "../helpers/pg.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(60_000);

type Status = {
  revision: number;
  counters: { name: string; value: number }[];
  journal: { revision: number; resource: string }[];
  events: { name: string; generation: number }[];
  locks: { name: string; agent_id: string; queue_depth: number; waiters: { agent_id: string; blocked: boolean }[] }[];
  graph: { edges: { agent_id: string; waits_for: string; kind: string; blocked: boolean }[] };
};
const status = async (d: DaemonProcess): Promise<Status> => (await d.rpc("airlock/status")).result as Status;
const newest = async (db: string) => Number((await storeQuery<{ r: string | null }>(db, "SELECT MAX(revision) AS r FROM journal"))[0]!.r ?? 0);

describePg("the status snapshot on two daemons", () => {
  test("is read beside row bodies while no line moved (no exclusive turn), as the list tools are, shows every change made on the other daemon, and a waiter that joins a line there at once", async () => {
    const orders = await ordersOfTracedPair(async (d1, d2, db) => {
      await status(d2); // its first may catch up with the other daemon's coming
      const from = Date.now();
      for (let i = 0; i < 6; i++) {
        const made = await d1.call("increment_counter", { name: `snap-${i}` });
        const s = await status(d2);
        expect(s.counters.find((c) => c.name === `snap-${i}`)?.value).toBe(made.value);
        expect(s.journal.at(-1)?.resource).toBe(`snap-${i}`);
        expect(s.revision).toBe(s.journal.at(-1)!.revision);
      }
      // The list tools read the same way: rows, and the lines when they show waiters.
      await d1.call("register_agent", { agent_id: "lister", ttl_seconds: 60 });
      await d1.call("push_task", { queue: "snap-queue", payload: "p" });
      await d1.call("claim_paths", { agent_id: "lister", room: "snap-room", paths: ["src/**"] });
      await d1.call("signal_event", { name: "snap-event" });
      const lists = {
        agents: (await d2.call("list_agents", {})).map((a: { agent_id: string }) => a.agent_id),
        locks: await d2.call("list_locks", {}),
        pools: Array.isArray(await d2.call("list_pools", {})),
        events: (await status(d2)).events.map((e) => [e.name, e.generation]),
        tasks: (await d2.call("list_tasks", { queue: "snap-queue" })).map((t: { payload: string }) => t.payload),
        claims: (await d2.call("list_path_claims", { room: "snap-room" })).map((c: { agent_id: string }) => c.agent_id),
      };
      expect(lists).toEqual({ agents: ["lister"], locks: [], pools: true, events: [["snap-event", 1]], tasks: ["p"], claims: ["lister"] });
      const to = Date.now();
      // A line body on d1: a waiter joins the lock's line there. d2's next snapshot shows it.
      const held = await d1.call("lock_resource", { name: "snap-lock", agent_id: "holder", ttl_seconds: 60 });
      expect(held.locked).toBe(true);
      const waiting = d1.call("lock_resource", { name: "snap-lock", agent_id: "waiter", ttl_seconds: 60, wait_seconds: 20 });
      await until("the waiter in the lock's line on d1", async () => (await storeQuery<{ n: string }>(db, "SELECT count(*) AS n FROM waiters WHERE queue = 'lock'"))[0]!.n === "1", 5_000);
      const s = await status(d2);
      expect(s.locks.map((l) => [l.name, l.agent_id, l.queue_depth, l.waiters.map((w) => [w.agent_id, w.blocked])])).toEqual([["snap-lock", "holder", 1, [["waiter", true]]]]);
      expect((await d2.call("list_locks", {})).map((l: { name: string; waiters: { agent_id: string }[] }) => [l.name, l.waiters.map((w) => w.agent_id)])).toEqual([["snap-lock", ["waiter"]]]);
      expect((await d1.call("unlock_resource", { name: "snap-lock", lock_token: held.lock_token })).released).toBe(true);
      expect((await answered("the waiter, granted", waiting)).locked).toBe(true);
      return { from, to };
    });
    expect(orders).toContain("order shared");
    expect(orders.filter((l) => l === "order exclusive")).toEqual([]);
  });
});

describePg("the status snapshot beside a writer in flight", () => {
  const c = useCluster(2);
  const d1 = () => c.daemons[0]!;
  const d2 = () => c.daemons[1]!;

  test("stops its journal tail before a revision in flight, shows it once committed, and passes a rollback's gap", async () => {
    const batch = await rowBatchHolder(c.db);
    try {
      for (const end of ["commit", "rollback"] as const) {
        await d1().call("increment_counter", { name: `gap-before-${end}` });
        const before = await newest(c.db);
        await status(d2()); // d2 has caught up to here
        // A row batch of some daemon, in flight: the order taken shared, a revision taken, not committed.
        await batch.hold();
        await batch.tx.unsafe("INSERT INTO journal (at, kind, resource) VALUES (0, 'counter.changed', 'gap-held')");
        await d1().call("increment_counter", { name: `gap-after-${end}` });
        expect(await newest(c.db)).toBe(before + 2);
        // Both daemons' snapshots stop before the revision in flight: one that followed the
        // feed from its revision would otherwise never be shown it.
        for (const d of [d1(), d2()]) {
          const s = await answered("a snapshot beside a row batch held open", status(d));
          expect([s.revision, s.journal.at(-1)?.revision, s.journal.some((e) => e.revision > before)]).toEqual([before, before, false]);
        }
        if (end === "commit") {
          await batch.commit();
          const s = await status(d2());
          expect(s.journal.slice(-2).map((e) => [e.revision, e.resource])).toEqual([
            [before + 1, "gap-held"],
            [before + 2, "gap-after-commit"],
          ]);
          expect(s.revision).toBe(before + 2);
        } else {
          // A gap for good: the revision stays missing, and once it has for a moment the
          // snapshot is read in the global order, which passes it.
          await batch.rollback();
          await until("d2's snapshot past the rollback's gap", async () => (await status(d2())).revision === before + 2, 5_000, 20);
          const s = await status(d2());
          expect(s.journal.at(-1)?.resource).toBe("gap-after-rollback");
          expect(s.journal.some((e) => e.revision === before + 1)).toBe(false);
        }
      }
    } finally {
      await batch.close();
    }
  });

  // On a connection of its own (PgDriver.readBeside): a snapshot stuck on a lock (here a table
  // it reads, locked by someone else) holds none of its daemon's row batches, which used to wait
  // for it in the one connection's queue. Its reader's backend killed under it, it is read again
  // in a row batch, and the next has a reader again.
  test("stuck on a locked table, holds up none of its own daemon's row bodies; its reader killed, it is read again", async () => {
    const other = await rowBatchHolder(c.db);
    const waitingOnNotes = async () =>
      (await storeQuery<{ pid: number }>(c.db, "SELECT pid FROM pg_locks WHERE relation = 'notes'::regclass AND NOT granted")).map((r) => r.pid);
    try {
      for (const kill of [false, true]) {
        const name = `beside-stuck-${kill}`;
        await status(d1()); // d1 caught up: its lines are the stored ones
        await other.tx.unsafe("BEGIN; LOCK TABLE notes IN ACCESS EXCLUSIVE MODE");
        const order: string[] = [];
        const snapshot = status(d1()).then((s) => (order.push("snapshot"), s));
        await until("the snapshot waiting for the lock on notes", async () => (await waitingOnNotes()).length === 1, 5_000, 20);
        for (let i = 1; i <= 5; i++) expect((await answered("an increment beside the stuck snapshot", d1().call("increment_counter", { name }))).value).toBe(i);
        order.push("increments");
        if (kill) {
          const [reader] = await waitingOnNotes();
          await storeQuery(c.db, "SELECT pg_terminate_backend(?)", reader!);
          // Read again in a row batch, where it waits for the lock as well.
          await until("the snapshot waiting for the lock again", async () => (await waitingOnNotes()).some((pid) => pid !== reader), 5_000, 20);
        }
        await other.rollback();
        const s = await answered("the snapshot once the lock is gone", snapshot);
        expect(order).toEqual(["increments", "snapshot"]);
        expect(s.counters.find((x) => x.name === name)?.value).toBe(5);
      }
      expect((await status(d1())).counters.find((x) => x.name === "beside-stuck-true")?.value).toBe(5);
    } finally {
      await other.close();
    }
  });

  // The graph's path edges come from the path index, which is memory: a claim handed over on
  // d1 writes path_claims and no line, so d2's lines stay the stored ones and its snapshot is
  // read beside row bodies, where the index is brought up to the rows first (freshen).
  test("shows a path wait's holder as the other daemon's last change to the claims left it", async () => {
    for (const a of ["path-holder", "path-heir", "path-waiter"]) await d1().call("register_agent", { agent_id: a, ttl_seconds: 120 });
    const claim = await d1().call("claim_paths", { agent_id: "path-holder", room: "snap-graph", paths: ["src/**"], ttl_seconds: 120 });
    const waiting = d1().call("claim_paths", { agent_id: "path-waiter", room: "snap-graph", paths: ["src/a.ts"], ttl_seconds: 120, wait_seconds: 30 });
    const waitsFor = async (d: DaemonProcess) =>
      (await status(d)).graph.edges.filter((e) => e.agent_id === "path-waiter" && e.kind === "path").map((e) => [e.waits_for, e.blocked]);
    await until("the path wait on d2's graph", async () => JSON.stringify(await waitsFor(d2())) === JSON.stringify([["path-holder", true]]), 5_000);
    const handed = await d1().call("hand_over", { token: claim.claim_token, to_agent: "path-heir" });
    expect(handed.handed_over).toBe(true);
    expect(await waitsFor(d1())).toEqual([["path-heir", true]]);
    expect(await waitsFor(d2())).toEqual([["path-heir", true]]);
    expect(await d1().call("release_paths", { claim_token: handed.token })).toEqual({ released: true });
    expect((await answered("the path waiter, granted", waiting)).granted).toBe(true);
  });
});
