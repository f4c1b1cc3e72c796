// `airlock run` and PID namespaces, against a real daemon: `airlock/identity` names the daemon's
// namespace; a run that may not bind by pid (--no-pid-binding, or a daemon that reports another
// namespace) holds an unbound slot, renews it while the command runs, releases it on exit, and
// lets it lapse at its TTL when run is killed -9. No unshare or container: "another namespace"
// is a relay in front of the daemon that answers airlock/identity with a foreign one.
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server, Subprocess } from "bun";
import pkg from "../../package.json";
import { cliEnv, daemonCommand, ROOT, runCli, useDaemon } from "../helpers/daemon.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(30_000);

const HAS_NS = existsSync("/proc/self/ns/pid");
const FOREIGN_NS = "pid:[4026599999]"; // no namespace of this machine: what a container's daemon would answer

const d = useDaemon();
const env = cliEnv(d);

interface Holder {
  agent_id: string;
  reason?: string;
  pid?: number;
}
const heavy = async (): Promise<{ in_use: number; queued: number; holders: Holder[] }> =>
  (await d.call("list_pools")).find((p: { pool: string }) => p.pool === "heavy");

afterEach(async () => {
  await until("the heavy pool to be empty", async () => {
    const p = await heavy();
    return p.in_use === 0 && p.queued === 0;
  }, 5000);
});

const scratch = () => mkdtempSync(join(tmpdir(), "airlock-runns-"));

/** A command that writes its pid, then runs until the file `go` appears, then exits 7. */
const held = (dir: string) => ["sh", "-c", `echo $$ > '${dir}/pid'; while [ ! -e '${dir}/go' ]; do sleep 0.05; done; exit 7`];

function spawnCli(args: string[], extraEnv: Record<string, string> = {}): { proc: Subprocess<"ignore", "pipe", "pipe">; err: () => string } {
  const proc = Bun.spawn([...daemonCommand(), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env, ...extraEnv },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let err = "";
  void (async () => {
    const dec = new TextDecoder();
    for await (const chunk of proc.stderr) err += dec.decode(chunk);
  })();
  return { proc, err: () => err };
}

/**
 * A relay to the daemon that answers airlock/identity itself (with `identity`, or as a daemon
 * that does not know the method when null) and passes every other call through.
 */
function relay(identity: Record<string, unknown> | null): Server<undefined> {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const body = await req.text();
      const msg = JSON.parse(body) as { id: unknown; method: string };
      if (msg.method === "airlock/identity") {
        return Response.json(
          identity
            ? { jsonrpc: "2.0", id: msg.id, result: identity }
            : { jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "method not found: airlock/identity" } },
        );
      }
      const headers: Record<string, string> = { "content-type": "application/json" };
      const auth = req.headers.get("authorization");
      if (auth) headers.authorization = auth;
      const res = await fetch(d.url, { method: "POST", headers, body });
      return new Response(await res.text(), { status: res.status, headers: { "content-type": "application/json" } });
    },
  });
}

describe("airlock/identity", () => {
  test("answers the daemon's pid, version and real PID namespace", async () => {
    const r = (await d.rpc("airlock/identity")).result;
    expect(r.pid).toBe(d.proc.pid);
    expect(r.version).toBe(pkg.version);
    if (HAS_NS) {
      expect(r.pid_namespace).toBe(readlinkSync(`/proc/${d.proc.pid}/ns/pid`));
      expect(r.pid_namespace).toMatch(/^pid:\[\d+\]$/);
    } else {
      expect(r.pid_namespace).toBeNull();
    }
  });

  test("answers the same over the Unix socket", async () => {
    const overSocket = (await d.rpcSocket("airlock/identity")).result;
    expect(overSocket).toEqual((await d.rpc("airlock/identity")).result);
  });
});

describe("in the daemon's PID namespace", () => {
  test("run binds the slot to the command's pid and says nothing about namespaces", async () => {
    const dir = scratch();
    const r = spawnCli(["run", "--", ...held(dir)]);
    await until("the command to start", () => existsSync(join(dir, "pid")) && readFileSync(join(dir, "pid"), "utf8").endsWith("\n"), 10_000);
    const pid = Number(readFileSync(join(dir, "pid"), "utf8"));
    await until("the slot to be bound to the command", async () => (await heavy()).holders[0]?.pid === pid, 5000);
    writeFileSync(join(dir, "go"), "");
    expect(await r.proc.exited).toBe(7);
    expect(r.err()).toBe("");
  });
});

describe("held by heartbeat", () => {
  test("--no-pid-binding holds an unbound slot, renews it past its TTL while the command runs, and releases it on exit", async () => {
    const dir = scratch();
    const r = spawnCli(["run", "--no-pid-binding", "--ttl", "2", "--reason", "hb test", "--", ...held(dir)]);
    await until("the command to start", () => existsSync(join(dir, "pid")), 10_000);
    const holders = (await heavy()).holders;
    expect(holders).toEqual([expect.objectContaining({ reason: "hb test" })]);
    expect(holders[0]!.pid).toBeUndefined();
    // 3.5 s is well past the 2 s TTL: only the renewals (every ~0.67 s) keep the slot.
    await Bun.sleep(3500);
    const later = (await heavy()).holders;
    expect(later).toEqual([expect.objectContaining({ agent_id: holders[0]!.agent_id, reason: "hb test" })]);
    expect(later[0]!.pid).toBeUndefined();
    writeFileSync(join(dir, "go"), "");
    expect(await r.proc.exited).toBe(7);
    // Released by run itself on the command's exit, not left to lapse.
    expect((await heavy()).in_use).toBe(0);
    expect(r.err()).toBe(""); // asked for: nothing to say
  });

  test("kill -9 of run lets the slot lapse at its TTL while the command runs on", async () => {
    const dir = scratch();
    const r = spawnCli(["run", "--no-pid-binding", "--ttl", "2", "--", ...held(dir)]);
    try {
      await until("the command to start", () => existsSync(join(dir, "pid")) && readFileSync(join(dir, "pid"), "utf8").endsWith("\n"), 10_000);
      const pid = Number(readFileSync(join(dir, "pid"), "utf8"));
      expect((await heavy()).in_use).toBe(1);
      r.proc.kill(9);
      await r.proc.exited;
      const killedAt = performance.now();
      await until("the slot to lapse", async () => (await heavy()).in_use === 0, 10_000, 50);
      const lapse = performance.now() - killedAt;
      // The 2 s TTL, plus a budget of seconds for a loaded machine: not bound to anything.
      expect(lapse).toBeLessThan(5000);
      expect(() => process.kill(pid, 0)).not.toThrow(); // the command itself is still running
    } finally {
      writeFileSync(join(dir, "go"), "");
    }
  });

  test("a daemon in another PID namespace makes run say so in one line and hold by heartbeat", async () => {
    const server = relay({ pid: 1, pid_namespace: FOREIGN_NS, version: pkg.version });
    try {
      const dir = scratch();
      const r = spawnCli(["run", "--", ...held(dir)], { AIRLOCK_PORT: String(server.port) });
      await until("the command to start", () => existsSync(join(dir, "pid")), 10_000);
      const holders = (await heavy()).holders;
      expect(holders).toHaveLength(1);
      expect(holders[0]!.pid).toBeUndefined();
      writeFileSync(join(dir, "go"), "");
      expect(await r.proc.exited).toBe(7);
      expect((await heavy()).in_use).toBe(0);
      const lines = r.err().trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain("another PID namespace");
      expect(lines[0]).toContain(FOREIGN_NS);
      expect(lines[0]).toContain("by heartbeat (ttl 1m, renewed every 20s)");
    } finally {
      server.stop(true);
    }
  });

  test("a daemon too old to answer airlock/identity is bound to by pid, as before", async () => {
    const server = relay(null);
    try {
      const dir = scratch();
      const r = spawnCli(["run", "--", ...held(dir)], { AIRLOCK_PORT: String(server.port) });
      await until("the command to start", () => existsSync(join(dir, "pid")) && readFileSync(join(dir, "pid"), "utf8").endsWith("\n"), 10_000);
      const pid = Number(readFileSync(join(dir, "pid"), "utf8"));
      await until("the slot to be bound to the command", async () => (await heavy()).holders[0]?.pid === pid, 5000);
      writeFileSync(join(dir, "go"), "");
      expect(await r.proc.exited).toBe(7);
      expect(r.err()).toBe("");
    } finally {
      server.stop(true);
    }
  });
});

describe("--ttl", () => {
  test("must be a whole number of seconds", async () => {
    const r = await runCli(["run", "--no-pid-binding", "--ttl", "0.5", "--", "true"], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("--ttl must be a whole number >= 1");
  });
});
