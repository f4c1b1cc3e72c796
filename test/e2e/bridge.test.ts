// `airlock mcp`, the stdio bridge, as real processes: the bridge (source, or the binary when
// AIRLOCK_BIN is set) in front of a real daemon, driven by the MCP SDK's stdio clients (v1, and
// v2 pinned to 2026-07-28) and by raw lines. Blocking calls through it, answers out of order,
// cancellation and a killed bridge detaching the waiter, stdin closing (exit 0 after the answers;
// a blocked call cut after the drain), the daemon down (a clear error at once, then answers once
// it is up), and the Unix socket.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio";
import type { Subprocess } from "bun";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clientPath } from "../../src/clients/command.ts";
import { type DaemonProcess, daemonCommand, ROOT, runCli, tempHome, useDaemon, useDaemonStarter } from "../helpers/daemon.ts";
import { freePort, track, until } from "../helpers/until.ts";

setDefaultTimeout(30_000);

const d = useDaemon();
const start = useDaemonStarter();

const tcpEnv = (x: DaemonProcess = d) => ({ AIRLOCK_HOME: x.home, AIRLOCK_PORT: String(x.port) });
const MODERN_META = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
const text = (r: any) => JSON.parse(r.content[0].text);

/** A bridge process driven by raw lines: send() writes one, answer(id) waits for the line with that id. */
interface Bridge {
  proc: Subprocess<"pipe", "pipe", "pipe">;
  send(msg: unknown): void;
  line(raw: string): void;
  request(msg: { id: string | number; [k: string]: unknown }): Promise<any>;
  answer(id: string | number): Promise<any>;
  /** Every message read from stdout so far, in order. */
  seen: any[];
  stderr(): string;
  close(): void;
}

function spawnBridge(env: Record<string, string>): Bridge {
  const [cmd, ...rest] = daemonCommand();
  const proc = Bun.spawn([cmd!, ...rest, "mcp"], { cwd: ROOT, env: { ...process.env, ...env }, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const seen: any[] = [];
  const waiting = new Map<string, (m: any) => void>();
  let err = "";
  void (async () => {
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += dec.decode(chunk, { stream: true });
      let i: number;
      while ((i = buf.indexOf("\n")) >= 0) {
        const m = JSON.parse(buf.slice(0, i));
        buf = buf.slice(i + 1);
        seen.push(m);
        waiting.get(JSON.stringify(m.id))?.(m);
      }
    }
  })();
  void (async () => {
    for await (const chunk of proc.stderr) err += new TextDecoder().decode(chunk);
  })();
  const b: Bridge = {
    proc,
    seen,
    line(raw) {
      proc.stdin.write(`${raw}\n`);
      proc.stdin.flush();
    },
    send: (msg) => b.line(JSON.stringify(msg)),
    answer(id) {
      const have = seen.find((m) => m.id === id);
      if (have) return Promise.resolve(have);
      return new Promise((resolve) => waiting.set(JSON.stringify(id), resolve));
    },
    request(msg) {
      const p = b.answer(msg.id);
      b.send({ jsonrpc: "2.0", ...msg });
      return p;
    },
    stderr: () => err,
    close: () => void proc.stdin.end(),
  };
  return b;
}

const call = (id: string | number, name: string, args: Record<string, unknown>) => ({ id, method: "tools/call", params: { name, arguments: args } });
const waitersOf = async (name: string) => ((await d.call("list_locks")).find((l: any) => l.name === name)?.waiters ?? []) as any[];
/** B no longer waits (the daemon detached it); after the unlock the lock is never B's. */
const detached = async (name: string) => (await waitersOf(name)).every((w) => !(w.agent_id === "B" && w.blocked));
async function unlockNotToB(name: string, lock_token: string) {
  await d.call("unlock_resource", { name, lock_token });
  const held = (await d.call("list_locks")).find((l: any) => l.name === name);
  expect(held?.agent_id).not.toBe("B");
}

describe("the SDK's stdio clients", () => {
  test("v1 StdioClientTransport: initialize, tools/list and tools/call, counted as the bridge in the 2025 era", async () => {
    const [cmd, ...rest] = daemonCommand();
    const client = new Client({ name: "bridge-e2e-v1", version: "1.0" });
    await client.connect(new StdioClientTransport({ command: cmd!, args: [...rest, "mcp"], cwd: ROOT, env: { ...(process.env as Record<string, string>), ...tcpEnv() }, stderr: "pipe" }));
    try {
      expect(client.getServerVersion()?.name).toBe("airlock");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("lock_resource");
      expect(text(await client.callTool({ name: "increment_counter", arguments: { name: "bridge-v1" } }))).toEqual({ value: 1 });
    } finally {
      await client.close();
    }
    const byClient = (await d.rpc("airlock/status")).result.eras_by_client as Record<string, Record<string, number>>;
    const ours = Object.entries(byClient).find(([ua]) => ua.includes("mcp bridge; bridge-e2e-v1/1.0"));
    expect(ours?.[1]["2025"]).toBeGreaterThanOrEqual(2); // list and call (initialize comes before the name is known)
  });

  test("v2 client pinned to 2026-07-28: discover, tools/list and tools/call in the modern era through the routing headers the bridge sets", async () => {
    const before = (await d.rpc("airlock/status")).result.eras["2026-07-28"] as number;
    const [cmd, ...rest] = daemonCommand();
    const client = new ClientV2({ name: "bridge-e2e-v2", version: "2.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(new StdioClientTransportV2({ command: cmd!, args: [...rest, "mcp"], cwd: ROOT, env: { ...(process.env as Record<string, string>), ...tcpEnv() }, stderr: "pipe" }));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("lock_resource");
      expect(text(await client.callTool({ name: "increment_counter", arguments: { name: "bridge-v2" } }))).toEqual({ value: 1 });
    } finally {
      await client.close();
    }
    expect((await d.rpc("airlock/status")).result.eras["2026-07-28"]).toBeGreaterThanOrEqual(before + 3);
  });
});

describe("raw lines", () => {
  test("a modern tools/call with a non-ASCII tool name reaches the daemon's own unknown-tool answer (Mcp-Name base64-encoded)", async () => {
    const b = spawnBridge(tcpEnv());
    try {
      const r = await b.request({ id: 1, method: "tools/call", params: { name: "bloqué", arguments: {}, _meta: MODERN_META } });
      expect(r.error).toMatchObject({ code: -32602, message: "unknown tool: bloqué" });
      const ok = await b.request({ id: 2, method: "tools/call", params: { name: "increment_counter", arguments: { name: "raw-modern" }, _meta: MODERN_META } });
      expect(ok.result.resultType).toBe("complete");
    } finally {
      b.close();
    }
    expect(await b.proc.exited).toBe(0);
  });

  test("a blocked lock is handed over through the bridge, and a later call is answered first (out of order)", async () => {
    const name = "bridge-lock";
    const held = await d.call("lock_resource", { name, agent_id: "A" });
    const b = spawnBridge(tcpEnv());
    try {
      const blocked = track(b.request(call("wait", "lock_resource", { name, agent_id: "B", wait_seconds: 20 })));
      await until("B to block", async () => (await waitersOf(name)).some((w) => w.agent_id === "B" && w.blocked));
      const quick = await b.request(call("quick", "increment_counter", { name: "bridge-order" }));
      expect(text(quick.result)).toEqual({ value: 1 });
      expect(blocked.settled()).toBe(false);
      expect(await d.call("unlock_resource", { name, lock_token: held.lock_token })).toEqual({ released: true });
      const got = text((await blocked.promise).result);
      expect(got.locked).toBe(true);
      expect(b.seen.map((m) => m.id)).toEqual(["quick", "wait"]);
      await d.call("unlock_resource", { name, lock_token: got.lock_token });
    } finally {
      b.close();
    }
  });

  test("killing the bridge mid-wait detaches its waiter", async () => {
    const name = "bridge-kill";
    const held = await d.call("lock_resource", { name, agent_id: "A" });
    const b = spawnBridge(tcpEnv());
    b.send({ jsonrpc: "2.0", ...call(1, "lock_resource", { name, agent_id: "B", wait_seconds: 30 }) });
    await until("B to block", async () => (await waitersOf(name)).some((w) => w.agent_id === "B"));
    b.proc.kill(9);
    await b.proc.exited;
    await until("B to be detached", () => detached(name), 10_000);
    await unlockNotToB(name, held.lock_token);
  });

  test("notifications/cancelled aborts that request: its waiter is detached and it gets no answer", async () => {
    const name = "bridge-cancel";
    const held = await d.call("lock_resource", { name, agent_id: "A" });
    const b = spawnBridge(tcpEnv());
    try {
      b.send({ jsonrpc: "2.0", ...call("c1", "lock_resource", { name, agent_id: "B", wait_seconds: 30 }) });
      await until("B to block", async () => (await waitersOf(name)).some((w) => w.agent_id === "B"));
      b.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "c1", reason: "user pressed Esc" } });
      await until("B to be detached", () => detached(name), 10_000);
      // The bridge still answers, and never answered the cancelled id.
      expect((await b.request({ id: "after", method: "ping" })).result).toEqual({});
      expect(b.seen.some((m) => m.id === "c1")).toBe(false);
    } finally {
      b.close();
      await unlockNotToB(name, held.lock_token);
    }
    expect(await b.proc.exited).toBe(0);
  });

  test("stdin closing exits 0 after every request read is answered; notifications and bad lines are handled", async () => {
    const b = spawnBridge(tcpEnv());
    b.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });
    b.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    b.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    b.send({ jsonrpc: "2.0", ...call(3, "increment_counter", { name: "bridge-eof" }) });
    b.line("not json");
    b.close();
    expect(await b.proc.exited).toBe(0);
    expect(b.seen.find((m) => m.id === 1).result.serverInfo.name).toBe("airlock");
    expect(b.seen.find((m) => m.id === 2).result.tools.length).toBeGreaterThan(10);
    expect(text(b.seen.find((m) => m.id === 3).result)).toEqual({ value: 1 });
    expect(b.seen.find((m) => m.id === null).error.code).toBe(-32700);
    expect(b.seen).toHaveLength(4); // the notification got no answer
  });

  test("stdin closing with a call still blocked: it is cut after the drain, its waiter detached, and the bridge exits 0", async () => {
    const name = "bridge-eof-blocked";
    const held = await d.call("lock_resource", { name, agent_id: "A" });
    const b = spawnBridge(tcpEnv());
    b.send({ jsonrpc: "2.0", ...call(1, "lock_resource", { name, agent_id: "B", wait_seconds: 50 }) });
    await until("B to block", async () => (await waitersOf(name)).some((w) => w.agent_id === "B"));
    const t0 = performance.now();
    b.close();
    expect(await b.proc.exited).toBe(0);
    expect(performance.now() - t0).toBeLessThan(15_000); // the drain is 3 s, not the call's 50 s
    expect(b.seen.find((m) => m.id === 1).error).toMatchObject({ code: -32800 });
    await until("B to be detached", () => detached(name), 10_000);
    await unlockNotToB(name, held.lock_token);
  });

  test("subscriptions/listen is relayed one event per line, and cancelling it ends it", async () => {
    const b = spawnBridge(tcpEnv());
    try {
      b.send({ jsonrpc: "2.0", id: "sub", method: "subscriptions/listen", params: { notifications: { airlockChanges: true }, _meta: MODERN_META } });
      await until("the acknowledgement", () => b.seen.find((m) => m.method === "notifications/subscriptions/acknowledged"), 5000);
      await d.call("set_note", { key: "bridge-listen", value: "hello" });
      const ev = await until("the change", () => b.seen.find((m) => m.method === "notifications/airlock/changes" && JSON.stringify(m).includes("bridge-listen")), 5000);
      expect(ev.params._meta["io.modelcontextprotocol/subscriptionId"]).toBe("sub");
      expect(JSON.stringify(ev.params.changes)).toContain("bridge-listen");
      b.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "sub" } });
      expect((await b.request({ id: "after", method: "ping" })).result).toEqual({});
    } finally {
      b.close();
    }
    expect(await b.proc.exited).toBe(0);
  });
});

describe("where the daemon is", () => {
  test("no daemon: the first request gets a clear error at once, and the bridge answers once one is up", async () => {
    const home = tempHome();
    const port = freePort();
    const b = spawnBridge({ AIRLOCK_HOME: home, AIRLOCK_PORT: String(port) });
    try {
      const t0 = performance.now();
      const r = await b.request({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "0" } } });
      expect(performance.now() - t0).toBeLessThan(5000);
      expect(r.error.code).toBe(-32000);
      expect(r.error.message).toContain(`no Airlock daemon answers at http://127.0.0.1:${port}`);
      expect(r.error.message).toContain("airlock daemon");
      const late = await start({ home, port });
      const again = await b.request({ id: 2, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "0" } } });
      expect(again.result.serverInfo.name).toBe("airlock");
      expect(text((await b.request(call(3, "increment_counter", { name: "late" }))).result)).toEqual({ value: 1 });
      await late.kill();
    } finally {
      b.close();
    }
    expect(await b.proc.exited).toBe(0);
  });

  test("a wrong token: the daemon's 401 comes back as a JSON-RPC error with the request's id, saying what to do", async () => {
    const b = spawnBridge({ ...tcpEnv(), AIRLOCK_TOKEN: "0".repeat(64) });
    try {
      const r = await b.request({ id: 9, method: "ping" });
      expect(r.error.code).toBe(-32603);
      expect(r.error.message).toContain(`the daemon at http://127.0.0.1:${d.port} answered 401`);
      expect(r.error.message).toContain("airlock token");
    } finally {
      b.close();
    }
    expect(await b.proc.exited).toBe(0);
  });

  test("over the Unix socket only (AIRLOCK_SOCKET, as in a sandbox): a blocked lock is handed over", async () => {
    const name = "bridge-socket";
    const held = await d.call("lock_resource", { name, agent_id: "A" });
    const b = spawnBridge({ AIRLOCK_HOME: d.home, AIRLOCK_SOCKET: d.socket! });
    try {
      const blocked = b.request(call(1, "lock_resource", { name, agent_id: "B", wait_seconds: 20 }));
      await until("B to block", async () => (await waitersOf(name)).some((w) => w.agent_id === "B"));
      await d.call("unlock_resource", { name, lock_token: held.lock_token });
      const got = text((await blocked).result);
      expect(got.locked).toBe(true);
      await d.call("unlock_resource", { name, lock_token: got.lock_token });
    } finally {
      b.close();
    }
    expect(await b.proc.exited).toBe(0);
  });
});

describe("setup junie", () => {
  test("writes a stdio entry that starts the bridge as Junie would (command + args, the user's PATH), and doctor checks it", async () => {
    const home = mkdtempSync(join(tmpdir(), "airlock-junie-e2e-"));
    const env = { HOME: home, AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port), PATH: clientPath() };
    const r = await runCli(["setup", "junie"], env);
    expect(r.code).toBe(0);
    const entry = JSON.parse(readFileSync(join(home, ".junie", "mcp", "mcp.json"), "utf8")).mcpServers.airlock;
    expect(entry.args.at(-1)).toBe("mcp");
    const client = new Client({ name: "junie-e2e", version: "0" });
    await client.connect(new StdioClientTransport({ command: entry.command, args: entry.args, cwd: home, env: { ...(process.env as Record<string, string>), ...env, ...entry.env }, stderr: "pipe" }));
    try {
      expect(text(await client.callTool({ name: "increment_counter", arguments: { name: "junie" } }))).toEqual({ value: 1 });
    } finally {
      await client.close();
    }
    const doc = await runCli(["doctor"], env, 60_000);
    expect(doc.stdout).toContain("ok    JetBrains Junie: MCP server in place");
    expect(doc.stdout).toMatch(/ok {4}JetBrains Junie: its stdio server `.*` runs \(airlock /);
  }, 90_000);
});
