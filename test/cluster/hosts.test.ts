// A slot bound to a process on a machine whose daemons are all gone: nobody is left to see the
// process end, so after AIRLOCK_HOST_GONE_SECONDS (10 minutes by default; 1 s here) the other
// machines' daemons release it, or the team's budget would stay held for good.
import { expect, setDefaultTimeout, test } from "bun:test";
import { hostname } from "node:os";
import { startCluster } from "../helpers/cluster.ts";
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
