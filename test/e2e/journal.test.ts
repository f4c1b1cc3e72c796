// The change feed over real HTTP: watch_changes blocks until another client's lock wakes it;
// revisions survive kill -9 and keep growing; `airlock log --json` prints the changes, and
// `--follow` the ones that come later.
import { expect, setDefaultTimeout, test } from "bun:test";
import { cliEnv, daemonCommand, ROOT, runCli, useDaemonStarter } from "../helpers/daemon.ts";

setDefaultTimeout(30_000);

const start = useDaemonStarter();

test("watch_changes blocks over HTTP until another client takes a lock", async () => {
  const d = await start();
  const first = await d.call("watch_changes", {});
  const since = first.revision;
  const t0 = Date.now();
  const watching = d.call("watch_changes", { since_revision: since, wait_seconds: 20, kinds: ["lock."] });
  await Bun.sleep(300);
  await d.call("increment_counter", { name: "not-a-lock" }); // filtered out: the watcher keeps waiting
  await Bun.sleep(200);
  const lock = await d.call("lock_resource", { name: "build/x", agent_id: "other", ttl_seconds: 60 });
  expect(lock.locked).toBe(true);
  const r = await watching;
  expect(Date.now() - t0).toBeLessThan(10_000);
  expect(r.changes).toHaveLength(1);
  expect(r.changes[0]).toMatchObject({ kind: "lock.granted", resource: "build/x", agent_id: "other", fence: lock.fence });
  expect(r.changes[0].at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  expect(r.revision).toBe(r.changes[0].revision);
  expect(r.revision).toBeGreaterThan(since);
});

test("revisions survive kill -9: after a restart new revisions are greater", async () => {
  const first = await start();
  for (let i = 0; i < 3; i++) await first.call("increment_counter", { name: "seq" });
  const before = (await first.call("watch_changes", {})).revision;
  expect(before).toBeGreaterThanOrEqual(3);
  await first.kill("SIGKILL");
  const second = await start({ home: first.home, db: first.db });
  const kept = await second.call("watch_changes", { since_revision: 0, kinds: ["counter."] });
  expect(kept.changes.map((c: { value: number }) => c.value)).toEqual([1, 2, 3]);
  await second.call("signal_event", { name: "after" });
  const after = await second.call("watch_changes", { since_revision: before });
  expect(after.changes.map((c: { kind: string }) => c.kind)).toEqual(["event.signaled"]);
  expect(after.revision).toBeGreaterThan(before);
});

test("airlock log --json --since 0 prints one change per line; the human form names kind and resource", async () => {
  const d = await start();
  await d.call("set_note", { key: "plan", value: "a secret plan", author: "me" });
  await d.call("push_task", { queue: "q", payload: "p" });
  const env = cliEnv(d);
  const r = await runCli(["log", "--json", "--since", "0"], env);
  expect(r.code).toBe(0);
  const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  expect(lines.map((l) => l.kind)).toEqual(["note.set", "task.pushed"]);
  expect(lines[0]).toMatchObject({ resource: "plan", agent_id: "me", length: 13 });
  expect(r.stdout).not.toContain("secret");
  const human = await runCli(["log", "--kinds", "task."], env);
  expect(human.code).toBe(0);
  expect(human.stdout.trim().split("\n")).toHaveLength(1);
  expect(human.stdout).toMatch(/#2 .*task\.pushed\s+q {2}id=\d+ priority=0/);
});

test("airlock log --follow prints a change made after it started", async () => {
  const d = await start();
  const env = cliEnv(d);
  const proc = Bun.spawn([...daemonCommand(), "log", "--follow", "--json"], { cwd: ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  try {
    await Bun.sleep(500);
    await d.call("signal_event", { name: "followed" });
    const reader = proc.stdout.getReader();
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(JSON.parse(text.split("\n")[0]!)).toMatchObject({ kind: "event.signaled", resource: "followed", generation: 1 });
  } finally {
    proc.kill();
    await proc.exited;
  }
});
