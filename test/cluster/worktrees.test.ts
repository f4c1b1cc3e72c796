// Working trees across two real daemons on one PostgreSQL database (SPEC §13, docs/worktrees.md,
// "Several daemons"): a report on one daemon is listed on the other and shows in its
// check_paths' edited_by (its in-memory index refreshed from the rows); a later report on the
// other daemon (the touched path committed) clears it on the first; a departure on either drops
// it on both. A report that changes something is a row body (docs/cluster.md, "Working-tree
// reports beside the order"): it takes no exclusive turn, the other daemon's check_paths still
// sees each one at once, and one made where memory does not hold the report before it builds on
// the row. Skipped without a server (AIRLOCK_TEST_PG).
import { expect, setDefaultTimeout, test } from "bun:test";
import type { DaemonProcess } from "../helpers/daemon.ts";
import { ordersOfTracedPair, useCluster } from "../helpers/cluster.ts";
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

describePg("working-tree reports beside the order", () => {
  test("reports that change something take no exclusive turn, and each shows at once in the other daemon's check_paths and feed", async () => {
    const room = "beside-wt-room";
    const REPORTS = 8;
    let feed: { kind: string; touched?: string[] }[] = [];
    const orders = await ordersOfTracedPair(async (d1, d2) => {
      const head = (await d1.call("watch_changes", {})).revision as number;
      const from = Date.now();
      for (let i = 1; i <= REPORTS; i++) {
        const w = await d2.call("report_worktree", { agent_id: "beside-a", room, branch: "feat", dirty: [`src/${i}.ts`], touched: [`src/${i}.ts`] });
        expect(w.touched).toEqual([`src/${i}.ts`]);
        // The other daemon's look at the reports (check_paths) finds this one, not the one before.
        const seen = await d1.call("check_paths", { paths: ["src/**"], room, agent_id: "beside-b" });
        expect(seen.edited_by.map((e: { path: string }) => e.path)).toEqual([`src/${i}.ts`]);
      }
      const to = Date.now();
      feed = (await d1.call("watch_changes", { since_revision: head, kinds: ["worktree."] })).changes;
      return { from, to };
    });
    expect(feed.map((e) => [e.kind, e.touched])).toEqual(Array.from({ length: REPORTS }, (_, i) => ["worktree.reported", [`src/${i + 1}.ts`]]));
    expect(orders.filter((o) => o === "order exclusive")).toEqual([]);
    expect(orders.filter((o) => o === "order shared").length).toBeGreaterThanOrEqual(REPORTS);
  });

  test("a report on a daemon that has not read the one before it builds on the row: the touched paths add up", async () => {
    const c2 = await ordersOfTracedPair(async (d1, d2) => {
      const room = "beside-merge-room";
      const first = await d1.call("report_worktree", { agent_id: "merge-a", room, dirty: ["src/a.ts"], touched: ["src/a.ts"] });
      // d2 never looked at this room: its memory holds no report of merge-a.
      const second = await d2.call("report_worktree", { agent_id: "merge-a", room, dirty: ["src/a.ts", "src/b.ts"], touched: ["src/b.ts"] });
      expect(second.touched).toEqual(["src/a.ts", "src/b.ts"]);
      const listed = await d1.call("list_worktrees", { room });
      expect(listed.map((w: { touched: string[] }) => w.touched)).toEqual([["src/a.ts", "src/b.ts"]]);
      // And back on d1, whose memory holds the first report, behind the row: the same.
      const third = await d1.call("report_worktree", { agent_id: "merge-a", room, dirty: ["src/a.ts", "src/b.ts", "src/c.ts"], touched: ["src/c.ts"] });
      expect(third.touched).toEqual(["src/a.ts", "src/b.ts", "src/c.ts"]);
      expect(first.touched).toEqual(["src/a.ts"]);
      return { from: 0, to: 0 };
    });
    expect(c2).toEqual([]);
  });
});

