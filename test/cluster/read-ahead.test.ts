// A catch-up's reads sent with the BEGIN (docs/cluster.md, "Deltas read with the BEGIN"): when
// another daemon wrote the path claims, a daemon's next transaction in the global order sends
// the claims', the deleted tokens' and the room fences' deltas behind its BEGIN, in the same
// round trip, and its catch-up finds them answered (the trace's "read ahead" marks) instead of
// sending them; the room's fences it learns there are the rows', so its next grant hands out the
// next one with no read of its own. The working trees' deltas (by horizon) go ahead the same way
// when another daemon's line body wrote a report. A daemon alone never sends them. Skipped without a server
// (AIRLOCK_TEST_PG).
import { expect, setDefaultTimeout, test } from "bun:test";
import { storeQuery } from "../helpers/daemon.ts";
import type { DaemonProcess } from "../helpers/daemon.ts";
import { withTracedPair } from "../helpers/cluster.ts";
import { describePg } from "../helpers/pg.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(60_000);

describePg("a catch-up's reads sent with the BEGIN", () => {
  /** The reads the traced daemon sent ahead in a window ("reads ahead N"), and those its catch-ups took ("read ahead"). */
  const ahead = (labels: string[]) => ({
    sent: labels.filter((l) => l.startsWith("reads ahead ")).map((l) => Number(l.slice("reads ahead ".length))),
    taken: labels.filter((l) => l === "read ahead").length,
  });

  test("follow another daemon's claims, learn the room's fences, and are never sent by a daemon alone", async () => {
    const claim = async (d: DaemonProcess, agent: string, path: string) => {
      const g = await d.call("claim_paths", { agent_id: agent, room: "ahead", paths: [path], ttl_seconds: 60 });
      expect(g.granted).toBe(true);
      return g as { claim_token: string; fence: number };
    };
    const { value: w, labels } = await withTracedPair(async (d1, d2, db) => {
      // Alone: d2 claims and releases, no other daemon writing; nothing is read ahead.
      const alone = { from: Date.now(), to: 0 };
      for (let i = 0; i < 3; i++) {
        const g = await claim(d2, "ahead-alone", `alone${i}/**`);
        expect(await d2.call("release_paths", { claim_token: g.claim_token })).toEqual({ released: true });
      }
      alone.to = Date.now();
      // Rounds: d1 claims in the room and releases (its fence gone with the claim); then d2 claims
      // there. d2's BEGIN sends the deltas ahead: from the second round on, the tables its last
      // catch-up found changed (d1's NOTIFY of a claim goes only to daemons watching the change
      // feed, and d2 has no watcher: docs/cluster.md, "Who hears a NOTIFY").
      const fences: number[] = [];
      const rounds = { from: Date.now(), to: 0 };
      for (let i = 0; i < 4; i++) {
        const g1 = await claim(d1, `ahead-d1-${i}`, `d1-${i}/**`);
        expect(await d1.call("release_paths", { claim_token: g1.claim_token })).toEqual({ released: true });
        const g2 = await claim(d2, `ahead-d2-${i}`, `d2-${i}/**`);
        fences.push(g1.fence, g2.fence);
        // d2's index is the rows': d1's released claim is not there, its own is.
        const check = await d2.call("check_paths", { room: "ahead", paths: [`d1-${i}/x`, `d2-${i}/x`] });
        expect(check.conflicts.map((x: { held_by: string }) => x.held_by)).toEqual([`ahead-d2-${i}`]);
      }
      rounds.to = Date.now();
      const row = await storeQuery<{ fence: string }>(db, "SELECT fence FROM fences WHERE resource = 'room:ahead'");
      return { alone, rounds, fences, last: Number(row[0]!.fence) };
    });
    // Each grant's fence is the room's next: none repeated or behind, whichever daemon granted.
    expect(w.fences).toEqual([...w.fences].sort((a, b) => a - b));
    expect(new Set(w.fences).size).toBe(w.fences.length);
    expect(w.last).toBe(w.fences.at(-1)!);
    expect(ahead(labels(w.alone.from, w.alone.to))).toEqual({ sent: [], taken: 0 });
    // Three reads go ahead each time (claims, deleted tokens, fences) and the catch-up takes all three.
    const during = ahead(labels(w.rounds.from, w.rounds.to));
    expect(during.sent.filter((n) => n === 3).length).toBeGreaterThanOrEqual(3);
    expect(during.taken).toBeGreaterThanOrEqual(9);
  });

  test("follow another daemon's working-tree reports made in its line body, and the index answers them", async () => {
    const { value: w, labels } = await withTracedPair(async (d1, d2) => {
      const room = "ahead-trees";
      const from = Date.now();
      for (let i = 0; i < 4; i++) {
        // A report through d2 (a row body), then one through d1, whose memory does not hold the
        // report before it: its row body finds the row changed, and its line body decides, from
        // the row (a version moves and names the working trees).
        await d2.call("report_worktree", { agent_id: "wt-1", room, dirty: [`a${i}.ts`, `b${i}.ts`], touched: [`b${i}.ts`] });
        const mine = await d1.call("report_worktree", { agent_id: "wt-1", room, dirty: [`a${i}.ts`, `b${i}.ts`, `c${i}.ts`], touched: [`c${i}.ts`] });
        expect(mine.touched).toEqual([`b${i}.ts`, `c${i}.ts`]);
        // d2's next line body catches up with it, the reports' delta going with its BEGIN.
        expect((await d2.call("claim_paths", { agent_id: "wt-c", room, paths: [`z${i}/**`], ttl_seconds: 60 })).granted).toBe(true);
        const seen = await d2.call("check_paths", { paths: ["*.ts"], room, agent_id: "wt-3" });
        expect(seen.edited_by.map((e: { path: string; agent_id: string }) => `${e.agent_id}:${e.path}`).sort()).toEqual([`wt-1:b${i}.ts`, `wt-1:c${i}.ts`]);
      }
      return { from, to: Date.now() };
    });
    // The reports' read (the rows and the deleted keys at or above the horizon applied: one
    // statement) goes ahead, and the catch-up takes it.
    const during = ahead(labels(w.from, w.to));
    expect(during.sent.filter((n) => n === 1).length).toBeGreaterThanOrEqual(3);
    expect(during.taken).toBeGreaterThanOrEqual(3);
  });

  test("follow a grant another daemon made to a waiter here: the daemons and the grants come with the BEGIN", async () => {
    const { value: w, labels } = await withTracedPair(async (d1, d2, db) => {
      const name = "ahead-lock";
      const held = await d1.call("lock_resource", { name, agent_id: "ahead-h1", ttl_seconds: 60 });
      expect(held.locked).toBe(true);
      const waiting = d2.call("lock_resource", { name, agent_id: "ahead-h2", ttl_seconds: 60, wait_seconds: 20 });
      waiting.catch(() => undefined); // its failure is read below; not an unhandled one if an assertion fails first
      await until("the waiter's place stored", async () => (await storeQuery<{ n: string }>(db, "SELECT count(*) AS n FROM waiters"))[0]!.n === "1", 10_000, 20);
      const from = Date.now();
      expect(await d1.call("unlock_resource", { name, lock_token: held.lock_token })).toEqual({ released: true });
      const got = await waiting;
      expect(got.locked).toBe(true);
      expect(got.fence).toBeGreaterThan(held.fence);
      return { from, to: Date.now() };
    });
    // d2 catches up at once (a call of its own waits): the daemons, the grants, the lines' delta
    // and the locks' go ahead; the daemons and the grants are answered from there (answering the
    // grant deletes it, a write, after which the rest is read again).
    const during = ahead(labels(w.from, w.to));
    expect(Math.max(0, ...during.sent)).toBeGreaterThanOrEqual(4);
    expect(during.taken).toBeGreaterThanOrEqual(2);
  });
});
