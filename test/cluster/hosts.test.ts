// A slot bound to a process on a machine whose daemons are all gone: nobody is left to see the
// process end, so after AIRLOCK_HOST_GONE_SECONDS (10 minutes by default; 1 s here) the other
// machines' daemons release it, or the team's budget would stay held for good.
import { expect, setDefaultTimeout, test } from "bun:test";
import { hostname } from "node:os";
import { answered, rowBatchHolder, seenEachOther, startCluster } from "../helpers/cluster.ts";
import { storeQuery } from "../helpers/daemon.ts";
import { describePg } from "../helpers/pg.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(30_000);

describePg("process-bound slots of a machine that is gone", () => {
  test("are released by the daemons of another machine once it has had no live daemon for the set time", async () => {
    const c = await startCluster(2, { env: { AIRLOCK_HOST_GONE_SECONDS: "1" } });
    const sleeper = Bun.spawn(["sleep", "60"], { detached: true, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    try {
      const [d1] = c.daemons as [NonNullable<(typeof c.daemons)[0]>];
      await d1.call("configure_pool", { pool: "gone-box", capacity: 1, expected_version: 0, author: "test", reason: "one bound slot" });
      const got = await d1.call("acquire_slot", { pool: "gone-box", agent_id: "builder", pid: sleeper.pid, reason: "a build on build-box-9" });
      expect(got.granted).toBe(true);
      // The binding now says the process runs on build-box-9, whose daemon was last seen a
      // minute ago: the process still runs (here), but no daemon of its machine can tell.
      await storeQuery(c.db, "UPDATE slots SET pid_start = replace(pid_start, ?, ?) WHERE pid = ?", `@${hostname()}`, "@build-box-9", sleeper.pid);
      await storeQuery(c.db, "INSERT INTO hosts (host, seen_at) VALUES (?, ?)", "build-box-9", Date.now() - 60_000);
      // A change to the pool, so the other daemon looks at its slots again (as it does when a
      // daemon on another machine binds one).
      expect((await d1.call("acquire_slot", { pool: "gone-box", agent_id: "next", reason: "queued behind it" })).granted).toBe(false);
      const holders = async () => ((await d1.call("list_pools")) as { pool: string; holders: { agent_id: string }[] }[]).find((p) => p.pool === "gone-box")!.holders;
      await until("the gone machine's slot released", async () => (await holders()).length === 0, 15_000, 200);
      const changes = (await d1.call("watch_changes", { since_revision: 0, kinds: ["pool.released"], limit: 10 })).changes as { reason?: string }[];
      expect(changes.map((e) => e.reason)).toContain("no daemon of its machine build-box-9 has been seen for 1 s");
    } finally {
      sleeper.kill(9);
      await c.stop();
    }
  });
});

// The host check (every 5 s, on every daemon that knows a binding of another machine) used to
// run in the global order each time, stopping every daemon's row bodies: with one bound build on
// one of a hundred machines, twenty exclusive turns a second for nothing (docs/cluster.md,
// "Periodic checks"). Here such a turn would wait for the row batch the test holds open.
describePg("the host check of a machine still seen", () => {
  test("runs in the shared order: calls on both daemons answer beside a row batch held open through a check, and the slot stays", async () => {
    const c = await startCluster(2);
    const sleeper = Bun.spawn(["sleep", "60"], { detached: true, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    const batch = await rowBatchHolder(c.db);
    try {
      const [d1, d2] = c.daemons as [NonNullable<(typeof c.daemons)[0]>, NonNullable<(typeof c.daemons)[1]>];
      await d1.call("configure_pool", { pool: "seen-box", capacity: 2, expected_version: 0, author: "test", reason: "a bound slot of another machine" });
      expect((await d1.call("acquire_slot", { pool: "seen-box", agent_id: "builder", pid: sleeper.pid, reason: "a build on build-box-8" })).granted).toBe(true);
      // The binding now says the process runs on build-box-8, whose daemon was seen just now.
      await storeQuery(c.db, "UPDATE slots SET pid_start = replace(pid_start, ?, ?) WHERE pid = ?", `@${hostname()}`, "@build-box-8", sleeper.pid);
      await storeQuery(c.db, "INSERT INTO hosts (host, seen_at) VALUES (?, ?)", "build-box-8", Date.now());
      // A change to the pool on d1, then a read on d2 in the global order: d2 catches up the
      // slots (the changed row with them) and watches the other machine from then on.
      expect((await d1.call("acquire_slot", { pool: "seen-box", agent_id: "other", reason: "unbound" })).granted).toBe(true);
      const holders = async () => ((await d2.call("list_pools")) as { pool: string; holders: { agent_id: string }[] }[]).find((p) => p.pool === "seen-box")!.holders.map((h) => h.agent_id).sort();
      expect(await holders()).toEqual(["builder", "other"]);
      // Each daemon has seen the other come, and a line body on each runs what that left for it.
      await seenEachOther(c.db);
      for (const d of [d1, d2]) await d.call("list_pools");
      await batch.hold();
      const end = performance.now() + 6000; // the host check is due within 5 s
      for (let i = 0; performance.now() < end; i++) {
        for (const [name, d] of [["d1", d1], ["d2", d2]] as const) {
          const made = await answered(`a counter on ${name} while another machine's binding is watched and a row batch is held`, d.call("increment_counter", { name: `seen-${name}-${i}` }));
          expect(made.value).toBe(1);
        }
        await Bun.sleep(200);
      }
      await batch.commit();
      expect(await holders()).toEqual(["builder", "other"]);
    } finally {
      sleeper.kill(9);
      await batch.close();
      await c.stop();
    }
  });
});
