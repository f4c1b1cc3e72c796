// `airlock lock NAME -- CMD` (source or compiled binary) against a real daemon: two runs of the
// same lock never overlap, CMD's exit code is lock's, the lock is released afterwards, a signal
// is forwarded to CMD, and --wait 0 against a held lock gives up without running CMD.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliEnv, daemonCommand, ROOT, runCli, useDaemon } from "../helpers/daemon.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(30_000);

const d = useDaemon();
const env = cliEnv(d);

const scratch = () => mkdtempSync(join(tmpdir(), "airlock-lock-"));

describe("airlock lock", () => {
  test("two concurrent `lock npm-install` runs never overlap, and the lock is released after both", async () => {
    const dir = scratch();
    const log = join(dir, "markers");
    // Each run appends start, sleeps, appends end: any interleaving shows as start start.
    const job = (id: string) => runCli(["lock", "npm-install", "--agent", `agent-${id}`, "--", "sh", "-c", `echo start ${id} >> ${log}; sleep 1; echo end ${id} >> ${log}`], env);
    const [a, b] = await Promise.all([job("a"), job("b")]);
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    const lines = readFileSync(log, "utf8").trim().split("\n");
    expect(lines).toHaveLength(4);
    const first = lines[0]!.split(" ")[1];
    const second = first === "a" ? "b" : "a";
    expect(lines).toEqual([`start ${first}`, `end ${first}`, `start ${second}`, `end ${second}`]);
    // The one that waited said who held the lock.
    expect((first === "a" ? b : a).stderr).toContain(`waiting for lock npm-install`);
    expect(await d.call("list_locks")).toEqual([]);
  });

  test("CMD's exit code is lock's, and the lock is released", async () => {
    const r = await runCli(["lock", "exit-code", "--", "sh", "-c", "exit 7"], env);
    expect(r.code).toBe(7);
    expect(await d.call("list_locks")).toEqual([]);
  });

  test("--wait 0 against a held lock exits 75 naming the holder, without running CMD", async () => {
    const held = await d.call("lock_resource", { name: "busy", agent_id: "someone-else", ttl_seconds: 60 });
    try {
      const dir = scratch();
      const r = await runCli(["lock", "busy", "--wait", "0", "--", "touch", join(dir, "ran")], env);
      expect(r.code).toBe(75);
      expect(r.stderr).toContain("lock busy is held by someone-else");
      expect(existsSync(join(dir, "ran"))).toBe(false);
      expect((await d.call("list_locks")).map((l: { agent_id: string }) => l.agent_id)).toEqual(["someone-else"]);
    } finally {
      await d.call("unlock_resource", { name: "busy", lock_token: held.lock_token });
    }
  });

  test("--wait takes seconds >= 0 (0: try once); anything else is refused before the lock is asked for", async () => {
    const dir = scratch();
    for (const bad of ["-1", "abc", "", " ", "Infinity"]) {
      const r = await runCli(["lock", "bad-wait", `--wait=${bad}`, "--", "touch", join(dir, "ran")], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`--wait must be a number of seconds >= 0 (got ${JSON.stringify(bad)})`);
    }
    expect(existsSync(join(dir, "ran"))).toBe(false);
    expect(await d.call("list_locks")).toEqual([]);
    expect(await runCli(["lock", "bad-wait", "--wait", "0.5", "--", "true"], env)).toMatchObject({ code: 0 });
    // The other seconds flags stay > 0.
    const ttl = await runCli(["lock", "bad-wait", "--ttl", "0", "--", "true"], env);
    expect(ttl.code).toBe(1);
    expect(ttl.stderr).toContain('--ttl must be a number of seconds > 0 (got "0")');
  });

  test("--wait 2 gives up after about that long; a lock freed within it is taken", async () => {
    const held = await d.call("lock_resource", { name: "slow", agent_id: "someone-else", ttl_seconds: 60 });
    const started = performance.now();
    const r = await runCli(["lock", "slow", "--wait", "2", "--", "true"], env);
    expect(r.code).toBe(75);
    expect(performance.now() - started).toBeLessThan(10_000);
    const waiting = runCli(["lock", "slow", "--wait", "20", "--", "echo", "ran"], env);
    await Bun.sleep(500);
    await d.call("unlock_resource", { name: "slow", lock_token: held.lock_token });
    expect(await waiting).toMatchObject({ code: 0, stdout: "ran\n" });
  });

  test("SIGINT is forwarded to CMD, which traps it; lock exits with CMD's code and unlocks", async () => {
    const dir = scratch();
    const script = `trap 'echo int > ${dir}/trapped; exit 130' INT; touch ${dir}/started; while :; do sleep 0.05; done`;
    const proc = Bun.spawn([...daemonCommand(), "lock", "trap", "--", "sh", "-c", script], { cwd: ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
    await until("the command to start", () => existsSync(join(dir, "started")), 10_000);
    expect((await d.call("list_locks")).map((l: { name: string }) => l.name)).toEqual(["trap"]);
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(130);
    expect(readFileSync(join(dir, "trapped"), "utf8").trim()).toBe("int");
    expect(await d.call("list_locks")).toEqual([]);
  });

  test("SIGTERM to a waiting lock exits 143; the lock stays with its holder and, once freed, is nobody's", async () => {
    const held = await d.call("lock_resource", { name: "leave", agent_id: "holder", ttl_seconds: 60 });
    const proc = Bun.spawn([...daemonCommand(), "lock", "leave", "--agent", "leaver", "--", "true"], { cwd: ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
    const leave = async () => (await d.call("list_locks")).find((l: { name: string }) => l.name === "leave");
    await until("lock to wait in line", async () => (await leave())?.queue_depth === 1, 10_000);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(143);
    expect((await leave())?.agent_id).toBe("holder");
    await d.call("unlock_resource", { name: "leave", lock_token: held.lock_token });
    await until("the lock to be free", async () => (await leave()) === undefined, 5000);
  });

  test("no command, or a command that does not exist, runs nothing and holds nothing", async () => {
    expect((await runCli(["lock", "x"], env)).code).toBe(2);
    const r = await runCli(["lock", "x", "--", "airlock-no-such-command"], env);
    expect(r.code).toBe(127);
    expect(r.stderr).toContain("command not found");
    expect(await d.call("list_locks")).toEqual([]);
  });
});
