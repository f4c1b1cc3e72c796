// Working trees across two real daemons on one PostgreSQL database (SPEC §13, docs/worktrees.md,
// "Several daemons"): a report on one daemon is listed on the other and shows in its
// check_paths' edited_by (its in-memory index refreshed from the rows); a later report on the
// other daemon (the touched path committed) clears it on the first; a departure on either drops
// it on both. Skipped without a server (AIRLOCK_TEST_PG).
import { expect, setDefaultTimeout, test } from "bun:test";
import type { DaemonProcess } from "../helpers/daemon.ts";
import { useCluster } from "../helpers/cluster.ts";
import { describePg } from "../helpers/pg.ts";

setDefaultTimeout(60_000);

describePg("working trees on two daemons sharing a store", () => {
  const c = useCluster(2);

  test("reported on one, seen by the other's check_paths; cleared and dropped from either", async () => {
    const [one, two] = c.daemons as [DaemonProcess, DaemonProcess];
    const room = "cluster-wt-room";
    await one.call("register_agent", { agent_id: "wt-a", ttl_seconds: 300 });
    await one.call("report_worktree", { agent_id: "wt-a", room, branch: "feat", dirty: ["src/a.ts", "src/b.ts"], touched: ["src/a.ts", "src/b.ts"] });
    expect((await two.call("list_worktrees", { room })).map((w: any) => [w.agent_id, w.branch, w.touched])).toEqual([["wt-a", "feat", ["src/a.ts", "src/b.ts"]]]);
    const seen = await two.call("check_paths", { paths: ["src/**"], room, agent_id: "wt-b" });
    expect(seen.clear).toBe(true);
    expect(seen.edited_by.map((e: any) => [e.path, e.agent_id, e.branch])).toEqual([
      ["src/a.ts", "wt-a", "feat"],
      ["src/b.ts", "wt-a", "feat"],
    ]);

    // src/a.ts committed, reported through the other daemon: daemon one's index follows.
    await two.call("report_worktree", { agent_id: "wt-a", room, branch: "feat", dirty: ["src/b.ts"] });
    expect((await one.call("check_paths", { paths: ["src/**"], room, agent_id: "wt-b" })).edited_by.map((e: any) => e.path)).toEqual(["src/b.ts"]);

    await two.call("unregister_agent", { agent_id: "wt-a" });
    expect(await one.call("list_worktrees", { room })).toEqual([]);
    expect((await one.call("check_paths", { paths: ["src/**"], room, agent_id: "wt-b" })).edited_by).toBeUndefined();
  });
});
