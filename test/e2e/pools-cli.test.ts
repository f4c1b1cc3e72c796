// `airlock wait`, `release`, `pools`, `pool set` and the POOLS section of `status` (source or
// compiled binary) against a real daemon.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { cliEnv, runCli, useDaemon } from "../helpers/daemon.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(20_000);

const d = useDaemon();
const env = cliEnv(d);

const pool = async (name: string) => (await d.call("list_pools")).find((p: { pool: string }) => p.pool === name);

describe("wait and release", () => {
  test("wait prints only a slot_token on stdout, and release TOKEN releases it (then says already released)", async () => {
    const w = await runCli(["wait", "--reason", "make -j8"], env);
    expect(w.code).toBe(0);
    expect(w.stdout).toMatch(/^[0-9a-f]{16,64}\n$/);
    const token = w.stdout.trim();
    const held = await pool("heavy");
    expect(held.in_use).toBe(1);
    // Not bound to a process (wait has exited): it lives by its TTL.
    expect(held.holders).toEqual([expect.objectContaining({ reason: "make -j8", weight: 1 })]);
    expect(held.holders[0].pid).toBeUndefined();

    const r = await runCli(["release", token], env);
    expect(r).toMatchObject({ code: 0, stdout: "released\n" });
    expect((await pool("heavy")).in_use).toBe(0);
    expect(await runCli(["release", token], env)).toMatchObject({ code: 0, stdout: "already released\n" });
  });

  test("wait --timeout 1 while the pool is held exits 1 and leaves no request behind", async () => {
    const held = await d.call("acquire_slot", { agent_id: "holder", reason: "cargo build" });
    try {
      const started = performance.now();
      const r = await runCli(["wait", "--timeout", "1", "--agent", "impatient"], env);
      expect(r.code).toBe(1);
      expect(performance.now() - started).toBeLessThan(5000);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain("1st in line, held by holder (cargo build, ");
      expect(r.stderr).toContain("no slot in pool heavy within 1s; the request was withdrawn");
      const p = await pool("heavy");
      expect(p.queued).toBe(0);
      expect(p.waiters).toEqual([]);
    } finally {
      await d.call("release_slot", { slot_token: held.slot_token });
    }
  });

  test("wait blocks until the holder releases, then prints its token", async () => {
    const held = await d.call("acquire_slot", { agent_id: "holder", reason: "cargo build" });
    const waiting = runCli(["wait", "--agent", "patient"], env);
    await until("wait to queue", async () => (await pool("heavy")).waiters.some((w: { agent_id: string }) => w.agent_id === "patient"), 10_000);
    await d.call("release_slot", { slot_token: held.slot_token });
    const r = await waiting;
    expect(r.code).toBe(0);
    const token = r.stdout.trim();
    expect((await pool("heavy")).holders).toEqual([expect.objectContaining({ agent_id: "patient" })]);
    expect(await runCli(["release", token], env)).toMatchObject({ code: 0, stdout: "released\n" });
  });
});

describe("pools and pool set", () => {
  test("pools lists heavy with its capacity and holders; --json prints list_pools' array", async () => {
    const held = await d.call("acquire_slot", { agent_id: "agent-a", reason: "npm test" });
    try {
      const human = await runCli(["pools"], env);
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/^heavy {2}capacity 1, 1 in use, 0 offered/m);
      expect(human.stdout).toMatch(/held by agent-a \(npm test\) {2}weight 1, \d+s held/);
      const json = await runCli(["pools", "--json"], env);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual(await d.call("list_pools"));
    } finally {
      await d.call("release_slot", { slot_token: held.slot_token });
    }
  });

  test("pool set raises the version and the capacity; a pool that does not exist is created at version 1", async () => {
    const before = (await pool("heavy")).version;
    const r = await runCli(["pool", "set", "heavy", "--capacity", "2", "--reason", "r"], env);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`pool heavy: capacity 2, version ${before + 1}`);
    expect(await pool("heavy")).toMatchObject({ capacity: 2, version: before + 1 });

    const created = await runCli(["pool", "set", "gpu", "--capacity", "3", "--reason", "one GPU, three jobs", "--offer-seconds", "5", "--author", "me"], env);
    expect(created.code).toBe(0);
    expect(created.stdout.trim()).toBe("pool gpu: capacity 3, version 1");
    expect(await pool("gpu")).toMatchObject({ capacity: 3, version: 1, offer_seconds: 5 });

    expect((await runCli(["pool", "set", "heavy", "--capacity", "1", "--reason", "back"], env)).code).toBe(0);
  });

  test("concurrent pool set calls all land: each one rereads the version and retries on a conflict", async () => {
    const before = (await pool("heavy")).version;
    const rs = await Promise.all([2, 3, 4].map((n) => runCli(["pool", "set", "heavy", "--capacity", String(n), "--reason", `race ${n}`], env)));
    for (const r of rs) expect(r.code).toBe(0);
    const versions = rs.map((r) => Number(/version (\d+)/.exec(r.stdout)![1])).sort();
    expect(versions).toEqual([before + 1, before + 2, before + 3]);
    expect((await pool("heavy")).version).toBe(before + 3);
    expect((await runCli(["pool", "set", "heavy", "--capacity", "1", "--reason", "back"], env)).code).toBe(0);
  });

  test("pool set with a capacity that is not a whole number >= 1 exits 1 with a message and changes nothing", async () => {
    const before = await pool("heavy");
    const r = await runCli(["pool", "set", "heavy", "--capacity", "zero", "--reason", "r"], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("--capacity must be a whole number >= 1");
    expect(await pool("heavy")).toEqual(before);
  });
});

describe("status", () => {
  test("status shows a POOLS section with the holder and the queue in order, and --json has pools", async () => {
    // A holder bound to a process of its own group, as `airlock run` makes them.
    const job = Bun.spawn(["sleep", "10"], { detached: true });
    const held = await d.call("acquire_slot", { agent_id: "agent-a", reason: "cargo test", pid: job.pid });
    expect(held.granted).toBe(true);
    const queued = await d.call("acquire_slot", { agent_id: "agent-b", reason: "npm test" });
    expect(queued.granted).toBe(false);
    try {
      const r = await runCli(["status"], env);
      expect(r.code).toBe(0);
      const lines = r.stdout.split("\n");
      const at = lines.findIndex((l) => l.startsWith("POOLS ("));
      expect(at).toBeGreaterThan(-1);
      const section = lines.slice(at, lines.indexOf("", at)).join("\n");
      expect(section).toContain("heavy  capacity 1, 1 in use, 0 offered, 1 queued");
      expect(section).toMatch(new RegExp(`held by agent-a \\(cargo test\\)  weight 1, \\d+s held, pid ${job.pid}`));
      expect(section).toMatch(/1\. agent-b \(npm test\)  weight 1, waiting \d+s, queued/);
      const json = JSON.parse((await runCli(["status", "--json"], env)).stdout);
      expect(json.pools.find((p: { pool: string }) => p.pool === "heavy")).toMatchObject({ in_use: 1, queued: 1 });
    } finally {
      await d.call("release_slot", { slot_token: queued.wake_token });
      await d.call("release_slot", { slot_token: held.slot_token });
      job.kill(9);
    }
  });
});
