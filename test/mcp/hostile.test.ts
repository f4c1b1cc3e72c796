// Hostile and odd input: never a crash, never a 5xx, always a clear answer, and no state
// change from a refused call.
import { describe, expect, test } from "bun:test";
import { MAX_ID_LENGTH, MAX_LIST_LENGTH, MAX_NAME_LENGTH, MAX_VALUE_LENGTH } from "../../src/mcp/tools/args.ts";
import { json, makeApp, type TestApp, until } from "./rpc.ts";

const call = (name: string, args: unknown) => JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } });

describe("oversized strings", () => {
  test(`a name over ${MAX_NAME_LENGTH} characters is refused with the limit, and nothing is locked`, async () => {
    const a = await makeApp();
    expect(await a.callError("lock_resource", { name: "n".repeat(MAX_NAME_LENGTH + 1), agent_id: "a" })).toBe(
      `name must be at most ${MAX_NAME_LENGTH} characters (got ${MAX_NAME_LENGTH + 1})`,
    );
    expect(await a.call("list_locks")).toEqual([]);
    expect((await a.call("lock_resource", { name: "n".repeat(MAX_NAME_LENGTH), agent_id: "a" })).locked).toBe(true);
  });

  test(`an agent_id over ${MAX_ID_LENGTH} characters is refused`, async () => {
    const a = await makeApp();
    expect(await a.callError("register_agent", { agent_id: "a".repeat(MAX_ID_LENGTH + 1) })).toContain(`agent_id must be at most ${MAX_ID_LENGTH}`);
    expect(await a.call("list_agents")).toEqual([]);
  });

  test(`a note value over ${MAX_VALUE_LENGTH} characters is refused and nothing is written`, async () => {
    const a = await makeApp();
    expect(await a.callError("set_note", { key: "k", value: "v".repeat(MAX_VALUE_LENGTH + 1) })).toContain(`value must be at most ${MAX_VALUE_LENGTH}`);
    expect(await a.call("list_notes")).toEqual([]);
    const big = "v".repeat(MAX_VALUE_LENGTH);
    await a.call("set_note", { key: "k", value: big });
    expect((await a.call("get_note", { key: "k" })).value).toBe(big);
  });

  test("a task payload over the limit is refused and nothing is queued", async () => {
    const a = await makeApp();
    expect(await a.callError("push_task", { queue: "q", payload: "p".repeat(MAX_VALUE_LENGTH + 1) })).toContain("payload must be at most");
    expect(await a.call("list_tasks", { queue: "q" })).toEqual([]);
  });

  test(`lock_resources with more than ${MAX_LIST_LENGTH} names is refused and nothing is locked`, async () => {
    const a = await makeApp();
    const names = Array.from({ length: MAX_LIST_LENGTH + 1 }, (_, i) => `n${i}`);
    expect(await a.callError("lock_resources", { names, agent_id: "a" })).toContain(`names must have at most ${MAX_LIST_LENGTH} entries`);
    expect(await a.callError("lock_resources", { names: ["ok", "x".repeat(MAX_NAME_LENGTH + 1)], agent_id: "a" })).toContain("names");
    expect(await a.call("list_locks")).toEqual([]);
  });

  test("a huge unknown tool name is answered, not a crash", async () => {
    const name = "x".repeat(500_000);
    expect(await (await makeApp()).callError(name, {})).toBe(`unknown tool: ${name}`);
  });
});

describe("odd shapes", () => {
  for (const [what, args] of [
    ["an array", ["r", "a"]],
    ["a string", "name=r"],
    ["a number", 5],
    ["true", true],
  ] as const) {
    test(`arguments that are ${what} get a clear error`, async () => {
      const a = await makeApp();
      expect(await a.callError("lock_resource", args)).toBe("arguments must be a JSON object");
      expect(await a.call("list_locks")).toEqual([]);
    });
  }

  for (const [what, params] of [
    ["a string", '"x"'],
    ["a number", "1"],
    ["null", "null"],
    ["an array", '["increment_counter"]'],
  ] as const) {
    test(`params that is ${what} is answered with a JSON-RPC error, HTTP 200`, async () => {
      const a = await makeApp();
      const res = await a.send({ body: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":${params}}` });
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body.id).toBe(4);
      expect(body.error.code).toBe(-32602);
      expect(body.error.message).toContain("params");
    });
  }

  test("a method that is not a string is an invalid request", async () => {
    const res = await (await makeApp()).send({ body: '{"jsonrpc":"2.0","id":2,"method":["ping"]}' });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ jsonrpc: "2.0", id: 2, error: { code: -32600, message: "invalid request: method must be a string" } });
  });

  test("deeply nested JSON as the whole body is a parse error, not a crash", async () => {
    const depth = 400_000;
    const res = await (await makeApp()).send({ body: "[".repeat(depth) + "]".repeat(depth) });
    expect(res.status).toBe(200);
    expect((await json(res)).error.code).toBe(-32700);
  });

  test("deeply nested params with a numeric id still get their answer with the id", async () => {
    const depth = 200_000;
    const res = await (await makeApp()).send({ body: `{"jsonrpc":"2.0","id":1e0,"method":"ping","params":{"x":${"[".repeat(depth)}${"]".repeat(depth)}}}` });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.endsWith(',"result":{}}')).toBe(true);
    expect(text).toMatch(/^\{"jsonrpc":"2.0","id":(1|1e0),"result"/);
  });

  test("deeply nested JSON inside an argument is refused by type", async () => {
    const a = await makeApp();
    const depth = 100_000;
    const res = await a.send({ body: call("set_note", "X").replace('"X"', `{"key":"k","value":${"[".repeat(depth)}${"]".repeat(depth)}}`) });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(JSON.parse(body.result.content[0].text)).toEqual({ error: "value must be a string (got an array)" });
    expect(await a.call("list_notes")).toEqual([]);
  });

  test("deeply nested objects as unknown arguments do not crash the tool runner", async () => {
    const a = await makeApp();
    const depth = 100_000;
    const res = await a.send({ body: call("increment_counter", "X").replace('"X"', `{"name":"c","junk":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}`) });
    expect(res.status).toBe(200);
    expect(JSON.parse((await json(res)).result.content[0].text)).toEqual({ value: 1 });
  });

  test("invalid UTF-8 bytes are a parse error or a clean answer, never a 5xx", async () => {
    const res = await (await makeApp()).send({ body: new Uint8Array([0xff, 0xfe, 0x7b, 0x22, 0x80]) });
    expect(res.status).toBe(200);
    expect((await json(res)).error.code).toBe(-32700);
  });

  test("numbers beyond float range are refused for integers and clamped for waits", async () => {
    const a = await makeApp();
    const post = async (name: string, argsJson: string) => {
      const res = await a.send({ body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${argsJson}}}` });
      expect(res.status).toBe(200);
      return JSON.parse((await json(res)).result.content[0].text);
    };
    expect(await post("increment_counter", '{"name":"c","by":1e400}')).toEqual({ error: "by must be a finite number" });
    expect(await post("lock_resource", '{"name":"r","agent_id":"a","ttl_seconds":-1e400}')).toEqual({ error: "ttl_seconds must be a finite number" });
    expect(await post("wait_for_event", '{"name":"e","wait_seconds":-1e400}')).toEqual({ generation: 0, fired: false });
    expect(await a.call("list_locks")).toEqual([]);
  });

  test("duplicate keys in arguments take the last value, as JSON.parse and Go do", async () => {
    const a = await makeApp();
    const res = await a.send({ body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"increment_counter","arguments":{"name":"x","name":"y"}}}' });
    expect(res.status).toBe(200);
    expect(await a.call("increment_counter", { name: "y", by: 0 })).toEqual({ value: 1 });
  });

  test("a __proto__ argument cannot supply the required arguments", async () => {
    const a = await makeApp();
    const res = await a.send({
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lock_resource","arguments":{"__proto__":{"name":"x","agent_id":"y"}}}}',
    });
    const body = await json(res);
    expect(body.result.isError).toBe(true);
    expect(JSON.parse(body.result.content[0].text)).toEqual({ error: "missing name" });
    expect(await a.call("list_locks")).toEqual([]);
  });

  test("arguments named like Object.prototype members are ignored", async () => {
    const a = await makeApp();
    expect(await a.call("increment_counter", { name: "c", constructor: 1, toString: "x", hasOwnProperty: null, valueOf: [] })).toEqual({ value: 1 });
  });
});

describe("unicode", () => {
  const names = ["файл:/путь/ü", "🔒🦀", "ملف", "a\u200bb", "e\u0301", "\u0000nul", "tab\tnew\nline", "quote\"back\\slash", "<script>"];
  for (const name of names) {
    test(`the name ${JSON.stringify(name)} round-trips through locks, notes, counters and tasks`, async () => {
      const a = await makeApp();
      const l = await a.call("lock_resource", { name, agent_id: name });
      expect(l.locked).toBe(true);
      expect(await a.call("lock_resource", { name, agent_id: "other" })).toMatchObject({ locked: false, held_by: name });
      expect((await a.call("list_locks")).map((x: any) => [x.name, x.agent_id])).toEqual([[name, name]]);
      expect(await a.call("unlock_resource", { name, lock_token: l.lock_token })).toEqual({ released: true });
      await a.call("set_note", { key: name, value: name, author: name });
      expect(await a.call("get_note", { key: name })).toEqual({ key: name, value: name, author: name });
      expect(await a.call("increment_counter", { name })).toEqual({ value: 1 });
      await a.call("push_task", { queue: name, payload: name });
      expect((await a.call("claim_next_task", { queue: name, agent_id: name })).payload).toBe(name);
    });
  }

  test("names differing only by normalization are different resources (bytes, not glyphs)", async () => {
    const a = await makeApp();
    expect((await a.call("lock_resource", { name: "\u00e9", agent_id: "a" })).locked).toBe(true);
    expect((await a.call("lock_resource", { name: "e\u0301", agent_id: "b" })).locked).toBe(true);
  });

  test("a lone surrogate is read as U+FFFD, as v2's Go decoder did, everywhere alike", async () => {
    const a = await makeApp();
    const l = await a.call("lock_resource", { name: "x\ud800", agent_id: "a\udfff" });
    expect(l.locked).toBe(true);
    expect(await a.call("lock_resource", { name: "x\ufffd", agent_id: "b" })).toMatchObject({ locked: false, held_by: "a\ufffd" });
    expect((await a.call("list_locks")).map((x: any) => x.name)).toEqual(["x\ufffd"]);
    await a.call("set_note", { key: "k\udc00", value: "v\ud800" });
    expect(await a.call("get_note", { key: "k\ufffd" })).toEqual({ key: "k\ufffd", value: "v\ufffd" });
  });

  test("a waiter that spelled a name with a lone surrogate is handed the lock like any other", async () => {
    const a = await makeApp();
    const l = await a.call("lock_resource", { name: "x\ufffd", agent_id: "a" });
    const p = a.call("lock_resource", { name: "x\ud800", agent_id: "b", wait_seconds: 30 });
    await until(() => a.kernel.locks.waits.size === 1, "b to wait");
    expect(await a.call("unlock_resource", { name: "x\udbff", lock_token: l.lock_token })).toEqual({ released: true });
    expect((await p).locked).toBe(true);
  });
});

describe("never a 5xx", () => {
  test("a burst of garbage requests all get 2xx or 4xx answers and the daemon still works", async () => {
    const a = await makeApp();
    const bodies = [
      "", "{", "}", "[]", "[1,2]", "null", '""', "0", "-", "NaN", "Infinity", "{\"jsonrpc\":\"2.0\"}",
      '{"jsonrpc":"2.0","id":1}', '{"jsonrpc":"2.0","id":1,"method":""}', '{"jsonrpc":"2.0","id":1,"method":"tools/call"}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":null}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":{"x":1}}}', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lock_resource","arguments":{"name":{},"agent_id":[]}}}',
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":{"x":1}}}', '{"jsonrpc":"2.0","id":1,"method":"__proto__"}',
      '{"jsonrpc":"2.0","id":1,"method":"constructor"}', '{"jsonrpc":"2.0","id":1,"method":"toString"}', "\u0000\u0001\u0002", "\ufeff{}",
    ];
    for (const body of bodies) {
      const res = await a.send({ body });
      expect(res.status).toBeLessThan(500);
      expect([200, 202]).toContain(res.status);
      if (res.status === 200) expect((await json(res)).jsonrpc).toBe("2.0");
    }
    expect(await a.call("increment_counter", { name: "alive" })).toEqual({ value: 1 });
  });
});

describe("a body that cannot be read", () => {
  test("a request body that breaks off mid-stream is answered with a 4xx, not a thrown error", async () => {
    const a = await makeApp();
    let sent = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (!sent) {
          sent = true;
          c.enqueue(new TextEncoder().encode('{"jsonrpc":"2.0",'));
        } else c.error(new Error("connection reset"));
      },
    });
    const res = await a.send({ body: stream });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("body");
  });
});

describe("messages and hand-over (SPEC §13): every bad call names its field and rule, and changes nothing", () => {
  /** Every inbox's messages, read without marking them, and who holds what. */
  async function state(a: Awaited<ReturnType<typeof makeApp>>) {
    const inbox = async (id: string) => (await a.call("read_messages", { agent_id: id, unread_only: false, peek: true })).messages;
    return JSON.stringify({ b: await inbox("B"), c: await inbox("C"), locks: await a.call("list_locks"), journal: (await a.call("watch_changes", {})).revision });
  }

  test("unknown recipients, nobody holding `about`, oversize bodies and subjects, too many recipients", async () => {
    const a = await makeApp();
    await a.call("register_agent", { agent_id: "B" });
    await a.call("register_agent", { agent_id: "C" });
    const before = await state(a);
    const refused: [Record<string, unknown>, string][] = [
      [{ from: "A", to: ["B", "Cc"], body: "x" }, 'to: unknown agent "Cc"'],
      [{ from: "A", about: "lock:nobody-holds-it", body: "x" }, "about: nobody else holds lock:nobody-holds-it now"],
      [{ from: "A", about: "path:src/x.ts", body: "x" }, "about: nobody else holds path:default:src/x.ts now"],
      [{ from: "A", about: "task:0", body: "x" }, "about: task:ID needs a task id"],
      [{ from: "A", about: "nonsense", body: "x" }, "about must be one of"],
      [{ from: "A", to: ["B"], body: "b".repeat(16 * 1024 + 1) }, "body must be at most 16384 bytes (16 KiB) of UTF-8 (got 16385)"],
      [{ from: "A", to: ["B"], body: "😀".repeat(4097) }, "body must be at most 16384 bytes"],
      [{ from: "A", to: ["B"], body: "x", subject: "s".repeat(201) }, "subject must be at most 200 characters (got 201)"],
      [{ from: "A", to: Array.from({ length: 51 }, () => "B"), body: "x" }, "to must have at most 50 recipients (got 51)"],
      [{ from: "A", to: "B", body: "x" }, "to must be an array of agent ids"],
      [{ from: "A", to: [7], body: "x" }, "to must be a string"],
      [{ from: "A", to: ["B"], body: "x", ack_required: "yes" }, "ack_required must be true or false"],
    ];
    for (const [args, message] of refused) expect(await a.callError("send_message", args)).toContain(message);
    expect(await state(a)).toBe(before);
  });

  test("read_messages and ack_message refuse bad numbers and a message not in the inbox", async () => {
    const a = await makeApp();
    await a.call("register_agent", { agent_id: "B" });
    const sent = await a.call("send_message", { from: "A", to: ["B"], body: "x" });
    const before = await state(a);
    expect(await a.callError("read_messages", { agent_id: "B", limit: 0 })).toContain("limit must be >= 1");
    expect(await a.callError("read_messages", { agent_id: "B", limit: 501 })).toContain("limit must be <= 500");
    expect(await a.callError("read_messages", { agent_id: "B", since_id: -1 })).toContain("since_id must be >= 0");
    expect(await a.callError("read_messages", { agent_id: "B", since_id: 1.5 })).toContain("since_id must be a whole number");
    expect(await a.callError("ack_message", { agent_id: "C", message_id: sent.message_id })).toContain(`message_id: there is no message ${sent.message_id} in C's inbox`);
    expect(await a.callError("ack_message", { agent_id: "B", message_id: sent.message_id, reply: "r".repeat(16 * 1024 + 1) })).toContain("reply must be at most 16384 bytes");
    expect(await state(a)).toBe(before);
  });

  test("hand_over refuses an agent not alive, a token not held, and the holder itself; the lock stays", async () => {
    const a = await makeApp();
    await a.call("register_agent", { agent_id: "B" });
    const g = await a.call("lock_resource", { name: "db", agent_id: "B" });
    const before = await state(a);
    expect(await a.callError("hand_over", { token: g.lock_token, to_agent: "C" })).toContain('to_agent: "C" is not a live agent');
    expect(await a.callError("hand_over", { token: "0".repeat(32), to_agent: "B" })).toContain("token: no lock, path claim or slot is held with this token");
    expect(await a.callError("hand_over", { token: g.lock_token, to_agent: "B" })).toContain('to_agent: "B" already holds lock:db');
    expect(await a.callError("hand_over", { token: g.lock_token, to_agent: "B", note: "n".repeat(8 * 1024 + 1) })).toContain("note must be at most 8192 bytes");
    expect(await a.callError("hand_over", { to_agent: "B" })).toBe("missing token");
    expect(await state(a)).toBe(before);
  });
});

describe("working trees (SPEC §13): bad reports change nothing", () => {
  async function state(a: TestApp): Promise<string> {
    return JSON.stringify({ trees: await a.call("list_worktrees", {}), journal: (await a.call("watch_changes", {})).revision });
  }

  test("too many paths, `..`, absolute paths outside the room, empty or non-string entries, a bad head or branch", async () => {
    const a = await makeApp();
    await a.call("report_worktree", { agent_id: "A", room: "r", dirty: ["kept.ts"], touched: ["kept.ts"] });
    const before = await state(a);
    const many = Array.from({ length: 2001 }, (_, i) => `f${i}.ts`);
    const refused: [Record<string, unknown>, string][] = [
      [{ dirty: many }, "dirty must have at most 2000 paths (got 2001)"],
      [{ touched: many }, "touched must have at most 2000 paths (got 2001)"],
      [{ dirty: ["a/../../etc"] }, 'dirty: paths must not contain ".." segments'],
      [{ touched: ["/etc/passwd"] }, "touched: absolute paths are accepted only in a room named by an absolute directory"],
      [{ dirty: [""] }, "entries of dirty must not be empty"],
      [{ dirty: [7] }, "every entry of dirty must be a string"],
      [{ dirty: ["x".repeat(1025)] }, "entries of dirty must be at most 1024 characters"],
      [{ head: "HEAD; rm -rf /" }, "head must be a commit id"],
      [{ branch: "b".repeat(257) }, "branch must be at most 256 characters"],
      [{ agent_id: undefined }, "missing agent_id"],
    ];
    for (const [args, message] of refused) expect(await a.callError("report_worktree", { agent_id: "A", room: "r", ...args })).toContain(message);
    expect(await state(a)).toBe(before);
    expect(await a.callError("check_paths", { paths: ["../x"], room: "r" })).toContain('".."');
  });
});
