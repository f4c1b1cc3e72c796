// `airlock status` against a real daemon draws the wait-for graph's cycles in the daemon's one
// meaning: a deadlock only when every agent in the cycle is blocked right now, and a cycle the
// daemon accepted (someone is between calls) as one that would deadlock if that agent blocks.
// `status --json` carries both kinds, the data the dashboard draws from.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { runCli, useDaemon } from "../helpers/daemon.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(30_000);

const d = useDaemon();
const env = () => ({ AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port), NO_COLOR: "1" });
const WAIT = 20; // seconds: every blocked call below is answered by the clean-up long before

const lock = (name: string, agent_id: string, wait_seconds = 0) => d.call("lock_resource", { name, agent_id, ttl_seconds: 120, wait_seconds });
const blocked = (agent: string, name: string) => async () => {
  const locks: any[] = await d.call("list_locks");
  return locks.find((l) => l.name === name)?.waiters.some((w: any) => w.agent_id === agent && w.blocked);
};

async function status(): Promise<{ text: string; json: any }> {
  const human = await runCli(["status"], env());
  expect(human.code).toBe(0);
  const json = await runCli(["status", "--json"], env());
  expect(json.code).toBe(0);
  const text = human.stdout.replace(/\x1b\[[0-9;]*m/g, "");
  return { text: text.slice(text.indexOf("WAITS"), text.indexOf("QUEUES")), json: JSON.parse(json.stdout) };
}

describe("status: a deadlock, and a cycle that would deadlock if an agent blocks", () => {
  test("one agent between calls: the daemon accepted the cycle, and status names who would close it", async () => {
    const x = await lock("sc-x", "sc-a");
    const y = await lock("sc-y", "sc-b");
    expect((await lock("sc-y", "sc-a", 1)).locked).toBe(false); // sc-a timed out: between calls, keeps its place
    const b = lock("sc-x", "sc-b", WAIT); // accepted: sc-a may let go
    await until("sc-b to block", blocked("sc-b", "sc-x"));
    try {
      const s = await status();
      expect(s.text).toContain("cycle that would deadlock if sc-a blocks: sc-a → (sc-y) → sc-b → (sc-x) → sc-a");
      expect(s.text).not.toContain("deadlock: ");
      expect(s.json.graph.deadlocks).toEqual([]);
      expect(s.json.graph.would_deadlock).toEqual([
        {
          cycle: [
            { agent_id: "sc-a", waits_for: "sc-b", resource: "sc-y" },
            { agent_id: "sc-b", waits_for: "sc-a", resource: "sc-x" },
          ],
          between_calls: ["sc-a"],
        },
      ]);
    } finally {
      await d.call("unlock_resource", { name: "sc-x", lock_token: x.lock_token });
      const got = await b;
      expect(got.locked).toBe(true);
      await d.call("unlock_resource", { name: "sc-x", lock_token: got.lock_token });
      await d.call("unlock_resource", { name: "sc-y", lock_token: y.lock_token });
    }
  });

  test("a deadlock that formed by a hand-off (everyone blocked now) is drawn as a deadlock", async () => {
    const x = await lock("hd-x", "hd-a");
    const z = await lock("hd-z", "hd-c");
    const b1 = lock("hd-x", "hd-b", WAIT); // hd-b's first call waits for hd-a
    await until("hd-b to block on hd-x", blocked("hd-b", "hd-x"));
    const b2 = lock("hd-z", "hd-b", WAIT); // its second waits for hd-c, who waits for nobody
    await until("hd-b to block on hd-z", blocked("hd-b", "hd-z"));
    const c = lock("hd-x", "hd-c", WAIT); // hd-c waits for hd-a: no cycle yet
    await until("hd-c to block", blocked("hd-c", "hd-x"));
    await d.call("unlock_resource", { name: "hd-x", lock_token: x.lock_token });
    const bx = await b1; // hd-x passed to hd-b: now hd-c waits for hd-b, who waits for hd-c
    expect(bx.locked).toBe(true);
    try {
      const s = await status();
      expect(s.text).toMatch(/deadlock: (hd-b → \(hd-z\) → hd-c → \(hd-x\) → hd-b|hd-c → \(hd-x\) → hd-b → \(hd-z\) → hd-c)\n/);
      expect(s.text).not.toContain("would deadlock");
      expect(s.json.graph.would_deadlock).toEqual([]);
      expect(s.json.graph.deadlocks).toHaveLength(1);
    } finally {
      await d.call("unlock_resource", { name: "hd-z", lock_token: z.lock_token });
      const bz = await b2;
      await d.call("unlock_resource", { name: "hd-x", lock_token: bx.lock_token });
      const cx = await c;
      for (const [name, t] of [["hd-z", bz.lock_token], ["hd-x", cx.lock_token]]) await d.call("unlock_resource", { name, lock_token: t });
    }
  });
});
