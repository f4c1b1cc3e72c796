// The MCP TypeScript SDK v2 client (@modelcontextprotocol/client), the reference client of the
// 2026-07-28 era, against a real daemon: pinned to 2026-07-28 (no fallback: it fails unless
// the modern era is served), and in auto mode (probes server/discover, falls back to
// initialize), where the daemon's own era counters show which era it ended in.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { type DaemonProcess, startDaemon } from "../helpers/daemon.ts";

// Bun's default is 5 s; a blocked waiter below may legitimately take longer when a test fails.
setDefaultTimeout(20_000);

let d: DaemonProcess;
beforeAll(async () => {
  d = await startDaemon();
});
afterAll(async () => {
  await d.kill();
});

type Mode = "auto" | { pin: "2026-07-28" };

async function connect(mode: Mode): Promise<Client> {
  const client = new Client({ name: "airlock-e2e-v2", version: "0.0.0" }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(new URL(d.url), { requestInit: { headers: { Authorization: `Bearer ${d.token}` } } });
  await client.connect(transport);
  return client;
}

const text = (r: any) => JSON.parse(r.content[0].text);
const eras = async () => (await d.rpc("airlock/status")).result.eras as Record<string, number>;

test("pinned to 2026-07-28: connects, lists the tools and calls one in the modern era", async () => {
  const before = await eras();
  const client = await connect({ pin: "2026-07-28" });
  try {
    expect(client.getProtocolEra()).toBe("modern");
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(client.getServerVersion()?.name).toBe("airlock");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("lock_resource");
    const r = await client.callTool({ name: "increment_counter", arguments: { name: "v2" } });
    expect(r.isError).toBeFalsy();
    expect(text(r)).toEqual({ value: 1 });
  } finally {
    await client.close();
  }
  const after = await eras();
  expect(after["2026-07-28"]!).toBeGreaterThanOrEqual(before["2026-07-28"]! + 3); // discover, list, call
  expect(after["2025"]).toBe(before["2025"]! + 1); // only the status read above
});

test("pinned to 2026-07-28: a call blocked on a lock is handed the lock when its holder releases", async () => {
  const holder = await connect({ pin: "2026-07-28" });
  const waiter = await connect({ pin: "2026-07-28" });
  try {
    const held = text(await holder.callTool({ name: "lock_resource", arguments: { name: "v2-lock", agent_id: "holder" } }));
    expect(held.locked).toBe(true);
    const blocked = waiter.callTool({ name: "lock_resource", arguments: { name: "v2-lock", agent_id: "waiter", wait_seconds: 30 } });
    // The waiter is in line before the holder lets go.
    for (let i = 0; ; i++) {
      const locks = text(await holder.callTool({ name: "list_locks", arguments: {} }));
      if (locks[0]?.queue_depth === 1) break;
      if (i > 500) throw new Error("the waiter never queued");
      await Bun.sleep(10);
    }
    expect(text(await holder.callTool({ name: "unlock_resource", arguments: { name: "v2-lock", lock_token: held.lock_token } }))).toEqual({ released: true });
    const got = text(await blocked);
    expect(got.locked).toBe(true);
    expect(got.lock_token).toEqual(expect.any(String));
  } finally {
    await holder.close();
    await waiter.close();
  }
});

test("auto mode probes server/discover and ends in the modern era", async () => {
  const before = await eras();
  const client = await connect("auto");
  try {
    expect(client.getProtocolEra()).toBe("modern");
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(text(await client.callTool({ name: "increment_counter", arguments: { name: "auto" } }))).toEqual({ value: 1 });
  } finally {
    await client.close();
  }
  const after = await eras();
  expect(after["2026-07-28"]!).toBeGreaterThan(before["2026-07-28"]!);
  expect(after["2025"]).toBe(before["2025"]! + 1); // the status read: no initialize was sent
});
