// The HTTP transport as real clients see it: v2's curl-style requests with no Accept header,
// MCP clients that send Accept and Mcp-Protocol-Version, notifications, and a tool call that
// blocks longer than Bun's default 10 s idle timeout.
import { expect, setDefaultTimeout, test } from "bun:test";
import { connect } from "node:net";
import { useDaemon } from "../helpers/daemon.ts";

// Bun's default is 5 s; a blocked waiter below may legitimately take longer when a test fails.
setDefaultTimeout(20_000);

const d = useDaemon();

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One HTTP/1.1 request written byte for byte, so that no client adds headers (fetch adds Accept). */
function rawRequest(port: number, head: string[], body: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    let data = "";
    sock.setEncoding("utf8");
    sock.on("data", (c) => (data += c));
    sock.on("error", reject);
    sock.on("end", () => {
      const split = data.indexOf("\r\n\r\n");
      const lines = data.slice(0, split).split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(":");
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      let rest = data.slice(split + 4);
      if (headers["transfer-encoding"] === "chunked") {
        let out = "";
        for (;;) {
          const nl = rest.indexOf("\r\n");
          const n = Number.parseInt(rest.slice(0, nl), 16);
          if (!n) break;
          out += rest.slice(nl + 2, nl + 2 + n);
          rest = rest.slice(nl + 2 + n + 2);
        }
        rest = out;
      }
      resolve({ status: Number(lines[0]!.split(" ")[1]), headers, body: rest });
    });
    sock.write([...head, `Content-Length: ${Buffer.byteLength(body)}`, "Connection: close", "", body].join("\r\n"));
  });
}

const callBody = (id: number, name: string, args: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });

test("a tools/call with no Accept header and no initialize is answered with one application/json body", async () => {
  const head = ["POST / HTTP/1.1", `Host: localhost:${d.port}`, "Content-Type: application/json", `Authorization: Bearer ${d.token}`];
  const r = await rawRequest(d.port, head, callBody(7, "increment_counter", { name: "no-accept" }));
  expect(r.status).toBe(200);
  expect(r.headers["content-type"]).toStartWith("application/json");
  const body = JSON.parse(r.body);
  expect(body).toMatchObject({ jsonrpc: "2.0", id: 7 });
  expect(JSON.parse(body.result.content[0].text)).toEqual({ value: 1 });
});

test("an MCP client's Accept: application/json, text/event-stream with Mcp-Protocol-Version gets JSON, not 406", async () => {
  const headers = { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };
  const res = await d.post(callBody(8, "increment_counter", { name: "sse-accept" }), headers);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("application/json");
  const body = (await res.json()) as { id: number; result: { content: { text: string }[] } };
  expect(body.id).toBe(8);
  expect(JSON.parse(body.result.content[0]!.text)).toEqual({ value: 1 });

  const init = await d.post(
    JSON.stringify({ jsonrpc: "2.0", id: "i", method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } }),
    headers,
  );
  expect(init.status).toBe(200);
  expect(init.headers.get("content-type")).toStartWith("application/json");
  expect(((await init.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe("2025-06-18");
});

test("notifications are accepted with 202 and an empty body", async () => {
  for (const method of ["notifications/initialized", "notifications/cancelled", "notifications/whatever"]) {
    const res = await d.post(JSON.stringify({ jsonrpc: "2.0", method, params: {} }), {
      accept: "application/json, text/event-stream",
    });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe("");
  }
});

test("a request without the bearer token is refused with 401", async () => {
  const res = await fetch(d.url, { method: "POST", headers: { "content-type": "application/json" }, body: callBody(1, "list_locks", {}) });
  expect(res.status).toBe(401);
});

test("a tool call that blocks 15 s is not cut by an idle timeout and answers locked:false with a wake_token", async () => {
  const name = "long-wait";
  const holder = await d.call("lock_resource", { name, agent_id: "holder" });
  expect(holder.locked).toBe(true);
  const start = performance.now();
  const res = await d.post(callBody(15, "lock_resource", { name, agent_id: "patient", wait_seconds: 15 }));
  const text = await res.text();
  const elapsed = performance.now() - start;
  expect(res.status).toBe(200);
  const result = JSON.parse(JSON.parse(text).result.content[0].text);
  expect(result).toMatchObject({ locked: false, held_by: "holder", queue_position: 1 });
  expect(result.wake_token).toEqual(expect.any(String));
  expect(elapsed).toBeGreaterThanOrEqual(14_900);
  expect(elapsed).toBeLessThan(20_000); // answered at its deadline, with seconds to spare for a loaded machine
  await d.call("unlock_resource", { name, lock_token: holder.lock_token });
}, 30_000);
