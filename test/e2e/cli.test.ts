// The CLI (source or compiled binary) against a real daemon: version, call, status (live and
// from the database), token, and a second daemon refused on a busy port.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json";
import { cliEnv, runCli, sqliteOnly, startDaemon, tempHome, useDaemon } from "../helpers/daemon.ts";
import { freePort, until } from "../helpers/until.ts";

// Bun's default is 5 s; a blocked waiter below may legitimately take longer when a test fails.
setDefaultTimeout(20_000);

const d = useDaemon();
const env = cliEnv(d);

const STACK_LINE = /^\s+at /m;

test("version prints `airlock <semver>` matching package.json", async () => {
  const r = await runCli(["version"]);
  expect(r.code).toBe(0);
  expect(r.stdout.trim()).toBe(`airlock ${pkg.version}`);
  expect(pkg.version).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
});

describe("call", () => {
  test("call increment_counter prints {\"value\":1} and exits 0", async () => {
    const r = await runCli(["call", "increment_counter", '{"name":"x"}'], env);
    expect(r).toMatchObject({ code: 0 });
    expect(r.stdout.trim()).toBe('{"value":1}');
    expect((await runCli(["call", "increment_counter", '{"name":"x"}'], env)).stdout.trim()).toBe('{"value":2}');
  });

  test("a tool error prints the error and exits 1", async () => {
    const r = await runCli(["call", "lock_resource", '{"agent_id":"a"}'], env);
    expect(r.code).toBe(1);
    expect(r.stdout.trim()).toBe('{"error":"missing name"}');
  });

  test("with no daemon listening, call exits 1 saying none answers and how to start one", async () => {
    const port = freePort();
    // A home of its own: d.home's daemon.json would (rightly) point at the running daemon instead.
    const r = await runCli(["call", "list_locks"], { AIRLOCK_HOME: tempHome(), AIRLOCK_PORT: String(port) });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`no Airlock daemon answers at http://127.0.0.1:${port}`);
    expect(r.stderr).toContain("airlock daemon");
    expect(r.stderr).not.toMatch(STACK_LINE);
  });

  test("arguments that are not JSON exit 1 with a message and no stack trace", async () => {
    const r = await runCli(["call", "increment_counter", "{name:x"], env);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain("not valid JSON");
    expect(r.stdout + r.stderr).not.toMatch(STACK_LINE);
  });
});

describe("status", () => {
  test("status shows a held lock with its waiter, and status --json has locks[0].queue_depth", async () => {
    const name = "file:/repo/package.json";
    const a = await d.call("lock_resource", { name, agent_id: "agent-A" });
    expect(a.locked).toBe(true);
    const abort = new AbortController();
    const waiter = d.call("lock_resource", { name, agent_id: "agent-B", wait_seconds: 30 }, { signal: abort.signal }).catch(() => undefined);
    try {
      await until("agent-B blocked", async () => (await d.call("list_locks"))[0]?.queue_depth === 1);

      const human = await runCli(["status"], env);
      expect(human.code).toBe(0);
      const lockLine = human.stdout.split("\n").find((l) => l.includes(name));
      expect(lockLine).toBeDefined();
      expect(lockLine).toContain("agent-A");
      expect(lockLine).toContain("1 waiting: agent-B");
      expect(human.stdout).not.toContain("\x1b["); // NO_COLOR and a pipe: plain text

      const json = await runCli(["status", "--json"], env);
      expect(json.code).toBe(0);
      const s = JSON.parse(json.stdout);
      expect(s.source).toBe("daemon");
      expect(s.locks[0]).toMatchObject({ name, agent_id: "agent-A", queue_depth: 1 });
      expect(s.locks[0].waiters).toEqual([expect.objectContaining({ agent_id: "agent-B", blocked: true })]);
    } finally {
      abort.abort();
      await waiter;
      await d.call("unlock_resource", { name, lock_token: a.lock_token });
    }
  });

  test("status shows the dashboard's sections: what each agent holds and waits for, the wait-for graph with its cycle, the newest changes", async () => {
    await d.call("configure_pool", { pool: "cli-gpu", capacity: 1, expected_version: 0, author: "test", reason: "test" });
    await d.call("register_agent", { agent_id: "st-a", ttl_seconds: 60, role: "lead" });
    await d.call("register_agent", { agent_id: "st-b", ttl_seconds: 60 });
    const x = await d.call("lock_resource", { name: "st-x", agent_id: "st-a", ttl_seconds: 60 });
    const y = await d.call("lock_resource", { name: "st-y", agent_id: "st-b", ttl_seconds: 60 });
    const slot = await d.call("acquire_slot", { agent_id: "st-a", pool: "cli-gpu", ttl_seconds: 60 });
    const claim = await d.call("claim_paths", { agent_id: "st-b", room: "st-room", paths: ["src/**"], ttl_seconds: 60 });
    // Each waits for the other's lock between calls (timed out, places kept): a cycle in the graph.
    await d.call("lock_resource", { name: "st-y", agent_id: "st-a", ttl_seconds: 60, wait_seconds: 1 });
    await d.call("lock_resource", { name: "st-x", agent_id: "st-b", ttl_seconds: 60, wait_seconds: 1 });
    try {
      const human = await runCli(["status"], env);
      expect(human.code).toBe(0);
      const out = human.stdout;
      const agentA = out.split("\n").find((l) => l.trimStart().startsWith("st-a [lead]"));
      expect(agentA).toContain("holds lock st-x, slot cli-gpu×1");
      expect(agentA).toContain("waits for lock st-y (st-b) away");
      expect(out.split("\n").find((l) => l.trimStart().startsWith("st-b  heartbeat"))).toContain("paths src/**");
      // Both are between calls: the daemon answered nobody, so it is no deadlock yet, and status says who would close it.
      expect(out).toMatch(/WAITS \(2\)\n {2}cycle that would deadlock if st-a and st-b block: st-a → \(st-y\) → st-b → \(st-x\) → st-a\n/);
      expect(out).not.toContain("deadlock: ");
      expect(out).toContain("st-a → st-b  lock st-y, between calls");
      const recent = out.slice(out.indexOf("RECENT CHANGES"));
      expect(recent).toMatch(/^RECENT CHANGES to revision \d+ \(10\)/);
      expect(recent).toContain("lock.granted");
      expect(recent).toContain("path.granted");
    } finally {
      await d.call("unlock_resource", { name: "st-x", lock_token: x.lock_token });
      await d.call("unlock_resource", { name: "st-y", lock_token: y.lock_token });
      await d.call("release_slot", { slot_token: slot.slot_token });
      await d.call("release_paths", { claim_token: claim.claim_token });
      await d.call("unregister_agent", { agent_id: "st-a" });
      await d.call("unregister_agent", { agent_id: "st-b" });
    }
  });

  sqliteOnly("when the daemon is down, status reads the database and says so", async () => {
    const own = await startDaemon();
    try {
      await own.call("lock_resource", { name: "kept-lock", agent_id: "ghost", ttl_seconds: 600 });
      await own.call("increment_counter", { name: "c", by: 7 });
      await own.kill("SIGKILL");
      const ownEnv = { AIRLOCK_HOME: own.home, AIRLOCK_PORT: String(own.port) };

      const json = await runCli(["status", "--json"], ownEnv);
      expect(json.code).toBe(0);
      const s = JSON.parse(json.stdout);
      expect(s.source).toBe("database");
      expect(s.locks).toEqual([expect.objectContaining({ name: "kept-lock", agent_id: "ghost", queue_depth: 0 })]);
      expect(s.counters).toEqual([{ name: "c", value: 7 }]);

      const human = await runCli(["status"], ownEnv);
      expect(human.code).toBe(0);
      expect(human.stdout).toContain("daemon not running");
      expect(human.stdout).toContain("kept-lock");
    } finally {
      await own.kill(9);
    }
  });

  test("with no daemon and no database, status exits 1 with a clear message", async () => {
    const home = tempHome();
    const r = await runCli(["status"], { AIRLOCK_HOME: home, AIRLOCK_PORT: String(freePort()) });
    expect(r.code).toBe(1);
    const out = r.stdout + r.stderr;
    expect(out).toContain("no Airlock daemon answers");
    expect(out).toContain(`no database at ${join(home, "state.db")}`);
    expect(out).not.toMatch(STACK_LINE);
  });
});

test("token prints where the token is and points to `airlock setup <client>`, never the literal token to paste", async () => {
  const r = await runCli(["token"], env);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(join(d.home, "token"));
  expect(r.stdout).toContain(`http://localhost:${d.port}/`);
  expect(r.stdout).toContain("airlock setup <client>");
  expect(r.stdout).toContain("claude-code");
  expect(r.stdout).not.toContain(d.token!);
  expect(r.stdout).not.toContain("claude mcp add");
  // Not every config reads the token at connect time: the ones holding a copy are named.
  expect(r.stdout).not.toContain("a new token needs no edit.");
  expect(r.stdout).toContain("Cursor, Gemini CLI, VS Code and Windsurf hold a copy: after a new token, run airlock setup <client> again");
});

test("a second daemon on a busy port exits 1 saying an Airlock already runs there, without a stack trace", async () => {
  const home = tempHome();
  const r = await runCli(["daemon", "--port", String(d.port), "--db", join(home, "state.db")], { AIRLOCK_HOME: home }, 10_000);
  const out = r.stdout + r.stderr;
  expect(r.code).toBe(1);
  expect(out).toMatch(/Airlock daemon is already running on 127\.0\.0\.1:\d+/);
  expect(out).not.toMatch(STACK_LINE);
  // It binds before it opens anything: no database and no token are left behind.
  expect(existsSync(join(home, "state.db"))).toBe(false);
  expect(existsSync(join(home, "token"))).toBe(false);
  // The first daemon is unharmed.
  expect(await d.call("increment_counter", { name: "still-here" })).toEqual({ value: 1 });
});

test("a daemon on a port another program holds exits 1 saying the port is in use by another program", async () => {
  const other = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  try {
    const home = tempHome();
    const r = await runCli(["daemon", "--port", String(other.port), "--db", join(home, "state.db")], { AIRLOCK_HOME: home }, 10_000);
    const out = r.stdout + r.stderr;
    expect(r.code).toBe(1);
    expect(out).toContain(`port ${other.port} on 127.0.0.1 is already in use by another program`);
    expect(out).not.toMatch(STACK_LINE);
  } finally {
    other.stop(true);
  }
});

describe("a bad token file refuses to start, never runs without auth", () => {
  for (const [what, content, mode, message] of [
    ["empty", "", 0o600, "is empty"],
    ["readable by others", "a".repeat(64), 0o644, "readable by other users"],
  ] as const) {
    test(`a token file that is ${what} makes the daemon exit 1 with a message`, async () => {
      const home = tempHome();
      mkdirSync(home, { recursive: true, mode: 0o700 });
      writeFileSync(join(home, "token"), content, { mode });
      const r = await runCli(["daemon", "--port", "0", "--db", join(home, "state.db")], { AIRLOCK_HOME: home }, 10_000);
      const out = r.stdout + r.stderr;
      expect(r.code).toBe(1);
      expect(out).toContain(message);
      expect(out).not.toContain("listening on");
      expect(out).not.toMatch(STACK_LINE);
    });
  }
});
