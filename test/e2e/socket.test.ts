// The Unix socket sandboxes mount, end to end against a real daemon process: the invariants that
// matter (a lock handed to a blocked waiter, a slot offer claimed with its wake_token, a path
// claim refused with a witness) hold over it exactly as over TCP; its guards (bearer, Origin,
// media type; any Host); its file (0600, never stolen from a live daemon, removed on SIGTERM,
// a stale one replaced after kill -9); and the CLI reaching the daemon through it.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { runCli, tempHome, useDaemon, useDaemonStarter } from "../helpers/daemon.ts";
import { freePort, track, until } from "../helpers/until.ts";

setDefaultTimeout(30_000);

const d = useDaemon();
const start = useDaemonStarter();

const rpcBody = (method: string, params: unknown = {}) => JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });

/** A raw request over the socket with exactly these headers (no token unless given). */
function rawSocket(socket: string, headers: Record<string, string>, body = rpcBody("ping")): Promise<Response> {
  return fetch("http://localhost/", { method: "POST", headers, body, unix: socket });
}

describe("the invariants over the socket", () => {
  test("the daemon listens on <home>/airlock.sock by default and answers ping", async () => {
    expect(d.socket).toBe(join(d.home, "airlock.sock"));
    expect(await d.rpcSocket("ping")).toEqual({ jsonrpc: "2.0", id: expect.any(Number), result: {} });
  });

  test("a lock is handed to a waiter blocked over the socket the moment its holder unlocks over the socket", async () => {
    const name = "sock-lock";
    const a = await d.callSocket("lock_resource", { name, agent_id: "A" });
    expect(a.locked).toBe(true);
    const b = track(d.callSocket("lock_resource", { name, agent_id: "B", wait_seconds: 20 }));
    await until("B to block", async () => (await d.callSocket("list_locks")).find((l: any) => l.name === name)?.waiters.some((w: any) => w.agent_id === "B" && w.blocked));
    expect(b.settled()).toBe(false);
    expect(await d.callSocket("unlock_resource", { name, lock_token: a.lock_token })).toEqual({ released: true });
    const got = await b.promise;
    expect(got.locked).toBe(true);
    // The TCP side sees the same state: one daemon, two doors.
    expect((await d.call("list_locks")).find((l: any) => l.name === name)?.agent_id).toBe("B");
    await d.callSocket("unlock_resource", { name, lock_token: got.lock_token });
  });

  test("a call blocked over the socket longer than Bun's 10 s idle timeout is answered, not cut", async () => {
    const name = "sock-long";
    const a = await d.callSocket("lock_resource", { name, agent_id: "A" });
    const started = performance.now();
    const b = await d.callSocket("lock_resource", { name, agent_id: "B", wait_seconds: 12 });
    expect(b.locked).toBe(false);
    expect(performance.now() - started).toBeGreaterThan(11_000);
    await d.callSocket("unlock_resource", { name, lock_token: a.lock_token });
  });

  test("a slot freed over the socket is offered to the queued request, which claims it with its wake_token", async () => {
    const pool = "sock-pool";
    expect(await d.callSocket("configure_pool", { pool, capacity: 1, expected_version: 0, author: "e2e", reason: "socket test", offer_seconds: 30 })).toMatchObject({
      configured: true,
    });
    const a = await d.callSocket("acquire_slot", { agent_id: "A", pool, reason: "cargo test" });
    expect(a.granted).toBe(true);
    const b = await d.callSocket("acquire_slot", { agent_id: "B", pool, reason: "npm test" });
    expect(b).toMatchObject({ granted: false, queue_position: 1 });
    expect(await d.callSocket("release_slot", { slot_token: a.slot_token })).toEqual({ released: true });
    expect((await d.callSocket("list_pools")).find((p: any) => p.pool === pool).waiters).toMatchObject([{ agent_id: "B", state: "offered" }]);
    const got = await d.callSocket("acquire_slot", { agent_id: "B", pool, wake_token: b.wake_token });
    expect(got).toMatchObject({ granted: true, pool });
    await d.callSocket("release_slot", { slot_token: got.slot_token });
  });

  test("an overlapping path claim over the socket is refused with a witness", async () => {
    const room = "sock-room";
    const claude = await d.callSocket("claim_paths", { agent_id: "claude", paths: ["src/api/**"], room, reason: "auth refactor" });
    expect(claude.granted).toBe(true);
    const codex = await d.callSocket("claim_paths", { agent_id: "codex", paths: ["src/api/auth/*.ts"], room });
    expect(codex).toMatchObject({
      granted: false,
      conflicts: [{ path: "src/api/auth/*.ts", held_by: "claude", held_path: "src/api/**", witness: expect.stringMatching(/^src\/api\/auth\/[^/]*\.ts$/) }],
    });
  });
});

describe("guards over the socket", () => {
  test("the bearer token is still required: 401 without it, 200 with it", async () => {
    expect(d.token).toMatch(/^[0-9a-f]{64}$/);
    const none = await rawSocket(d.socket!, { "content-type": "application/json" });
    expect(none.status).toBe(401);
    const wrong = await rawSocket(d.socket!, { "content-type": "application/json", authorization: "Bearer nope" });
    expect(wrong.status).toBe(401);
    const right = await rawSocket(d.socket!, { "content-type": "application/json", authorization: `Bearer ${d.token}` });
    expect(right.status).toBe(200);
  });

  test("any Host (or none) is accepted over the socket, while a foreign Host is still refused over TCP", async () => {
    const auth = { "content-type": "application/json", authorization: `Bearer ${d.token}` };
    for (const host of ["evil.example", "", "sandbox:1234"]) {
      const r = await rawSocket(d.socket!, { ...auth, host });
      expect([host, r.status]).toEqual([host, 200]);
    }
    const health = await fetch("http://evil.example/healthz", { unix: d.socket! });
    expect([health.status, await health.text()]).toEqual([200, "ok"]);
    const tcp = await d.post(rpcBody("ping"), { host: "evil.example" });
    expect(tcp.status).toBe(403);
  });

  test("a foreign Origin, a wrong media type and an oversized body are refused over the socket as over TCP", async () => {
    const auth = { "content-type": "application/json", authorization: `Bearer ${d.token}` };
    expect((await rawSocket(d.socket!, { ...auth, origin: "http://evil.example" })).status).toBe(403);
    expect((await rawSocket(d.socket!, { ...auth, origin: "http://localhost:3000" })).status).toBe(200);
    expect((await rawSocket(d.socket!, { ...auth, "content-type": "text/plain" })).status).toBe(415);
    expect((await rawSocket(d.socket!, auth, "x".repeat(1024 * 1024 + 1))).status).toBe(413);
  });
});

describe("the socket file", () => {
  test("is a socket of mode 0600 in the 0700 home", () => {
    const st = statSync(d.socket!);
    expect(st.isSocket()).toBe(true);
    expect((st.mode & 0o777).toString(8)).toBe("600");
    expect((statSync(dirname(d.socket!)).mode & 0o777).toString(8)).toBe("700");
  });

  test("a second daemon on a live daemon's socket exits 1 and leaves the socket working", async () => {
    const home = tempHome();
    const r = await runCli(["daemon", "--port", "0", "--db", join(home, "state.db"), "--socket", d.socket!], { AIRLOCK_HOME: home }, 10_000);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain(`an Airlock daemon is already listening on the socket ${d.socket}`);
    expect(existsSync(join(home, "state.db"))).toBe(false);
    expect(await d.callSocket("increment_counter", { name: "sock-still-here" })).toEqual({ value: 1 });
  });

  test("--socket PATH is used, SIGTERM removes it, and after kill -9 a restart replaces the stale file", async () => {
    const home = tempHome();
    const socket = join(dirname(home), "chosen.sock");
    const first = await start({ home, socket });
    expect(first.socket).toBe(socket);
    expect(existsSync(join(home, "airlock.sock"))).toBe(false);
    expect(await first.callSocket("increment_counter", { name: "n" })).toEqual({ value: 1 });
    await first.kill(9);
    expect(statSync(socket).isSocket()).toBe(true); // left behind, nobody answers on it
    const second = await start({ home, db: first.db, socket });
    expect(await second.callSocket("increment_counter", { name: "n" })).toEqual({ value: 2 });
    expect(await second.kill("SIGTERM")).toBe(0);
    expect(existsSync(socket)).toBe(false);
  });

  test("--socket off listens on TCP only", async () => {
    const off = await start({ socket: "off" });
    expect(off.socket).toBeNull();
    expect(existsSync(join(off.home, "airlock.sock"))).toBe(false);
    expect(await off.call("increment_counter", { name: "tcp" })).toEqual({ value: 1 });
  });
});

describe("the CLI over the socket", () => {
  test("with AIRLOCK_SOCKET set it calls through the socket even when AIRLOCK_PORT points nowhere", async () => {
    await d.call("lock_resource", { name: "cli-sock", agent_id: "holder" });
    const r = await runCli(["call", "list_locks"], { AIRLOCK_HOME: d.home, AIRLOCK_SOCKET: d.socket!, AIRLOCK_PORT: String(freePort()) });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toContainEqual(expect.objectContaining({ name: "cli-sock", agent_id: "holder" }));
  });

  test("with nothing behind AIRLOCK_SOCKET the error names the socket", async () => {
    const missing = join(dirname(d.home), "nobody.sock");
    const r = await runCli(["call", "list_locks"], { AIRLOCK_HOME: d.home, AIRLOCK_SOCKET: missing });
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain(`no Airlock daemon answers at the socket ${missing}`);
  });

  test("airlock wait with AIRLOCK_LABEL_PREFIX tags the slot's reason and default agent id", async () => {
    await d.call("configure_pool", { pool: "sock-label", capacity: 1, expected_version: 0, author: "e2e", reason: "label test" });
    const r = await runCli(["wait", "--pool", "sock-label", "--ttl", "60"], {
      AIRLOCK_HOME: d.home,
      AIRLOCK_SOCKET: d.socket!,
      AIRLOCK_PORT: String(freePort()),
      AIRLOCK_LABEL_PREFIX: "bwrap:issue-42",
    });
    expect(r.code).toBe(0);
    const token = r.stdout.trim();
    const pool = (await d.call("list_pools")).find((p: any) => p.pool === "sock-label");
    expect(pool.holders).toEqual([expect.objectContaining({ agent_id: expect.stringMatching(/^bwrap:issue-42:wait:/), reason: "bwrap:issue-42 airlock wait" })]);
    expect(await d.callSocket("release_slot", { slot_token: token })).toEqual({ released: true });
  });
});
