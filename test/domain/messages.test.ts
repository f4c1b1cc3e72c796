import { describe, expect, test } from "bun:test";
import { AirlockError } from "../../src/errors.ts";
import { MAX_BODY_BYTES, MAX_PER_AGENT, MESSAGE_RETENTION_MS, type ReadRequest } from "../../src/domain/messages.ts";
import { all } from "../../src/store/tx.ts";
import { useKernel } from "../helpers/kernel.ts";
import { flush, track, useRestarts } from "./support.ts";

const t = useKernel();
const msg = () => t.kernel.messages;
const TTL = 60_000;

const read = (agentId: string, more: Partial<ReadRequest> = {}) => msg().read({ agentId, unreadOnly: true, sinceId: 0, waitMs: 0, limit: 50, peek: false, ...more });

async function refused(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(AirlockError);
    return (err as Error).message;
  }
  throw new Error("not refused");
}

async function rows(): Promise<number> {
  const r = await t.kernel.ctx.read(() => all<{ n: number }>("SELECT COUNT(*) AS n FROM message_recipients"));
  return r[0]!.n;
}

describe("send and read", () => {
  test("a message to a registered agent is read once, oldest first, and marked read", async () => {
    await t.kernel.presence.register("B", TTL);
    const a = await msg().send({ from: "A", to: ["B"], body: "how long will you be?", subject: "route.ts" });
    const b = await msg().send({ from: "A", to: ["B"], body: "second" });
    expect(a).toEqual({ id: a.id, to: ["B"], threadId: String(a.id) });
    const r = await read("B");
    expect(r.unread).toBe(0);
    expect(r.messages.map((m) => [m.id, m.from, m.to, m.body, m.subject, m.threadId, m.ackRequired])).toEqual([
      [a.id, "A", ["B"], "how long will you be?", "route.ts", String(a.id), false],
      [b.id, "A", ["B"], "second", undefined, String(b.id), false],
    ]);
    expect((await read("B")).messages).toEqual([]);
    expect((await read("B", { unreadOnly: false })).messages.map((m) => m.id)).toEqual([a.id, b.id]);
    expect((await read("B", { unreadOnly: false, sinceId: a.id })).messages.map((m) => m.id)).toEqual([b.id]);
  });

  test("peek leaves messages unread; limit takes the oldest and marks only those", async () => {
    await t.kernel.presence.register("B", TTL);
    for (const body of ["1", "2", "3"]) await msg().send({ from: "A", to: ["B"], body });
    expect((await read("B", { peek: true })).unread).toBe(3);
    const first = await read("B", { limit: 2 });
    expect(first.messages.map((m) => m.body)).toEqual(["1", "2"]);
    expect(first.unread).toBe(1);
    expect((await read("B")).messages.map((m) => m.body)).toEqual(["3"]);
  });

  test("a blocked read is woken by a send, and a read of another agent is not", async () => {
    await t.kernel.presence.register("B", TTL);
    await t.kernel.presence.register("C", TTL);
    const b = track(read("B", { waitMs: 30_000 }));
    const c = track(read("C", { waitMs: 30_000 }));
    await flush();
    expect(b.done).toBe(false);
    await msg().send({ from: "A", to: ["B"], body: "hi" });
    await flush();
    expect(b.value?.messages.map((m) => m.body)).toEqual(["hi"]);
    expect(c.done).toBe(false);
    t.clock.advance(30_000);
    await flush();
    expect(c.value).toEqual({ messages: [], unread: 0 });
  });

  test("an away agent still gets the message: seen once, it is no typo", async () => {
    await t.kernel.presence.register("B", TTL);
    await t.kernel.presence.unregister("B");
    await msg().send({ from: "A", to: ["B"], body: "when you are back" });
    expect((await read("B")).messages.map((m) => m.body)).toEqual(["when you are back"]);
  });

  test("holding a lock, claiming paths or a slot makes an agent seen without registering", async () => {
    await t.kernel.locks.acquire({ name: "db", agentId: "L", ttlMs: TTL, waitMs: 0 });
    await t.kernel.paths.claim({ agentId: "P", paths: ["src/**"], ttlMs: TTL });
    await t.kernel.pools.acquire({ agentId: "S", pool: "heavy", weight: 1, waitMs: 0, ttlMs: TTL });
    const sent = await msg().send({ from: "A", to: ["L", "P", "S", "L"], body: "x" });
    expect(sent.to).toEqual(["L", "P", "S"]);
  });

  test("refuses an agent never seen, naming it, and sends nothing", async () => {
    await t.kernel.presence.register("B", TTL);
    const m = await refused(msg().send({ from: "A", to: ["B", "bobb"], body: "x" }));
    expect(m).toContain('to: unknown agent "bobb"');
    expect(await rows()).toBe(0);
    expect((await read("B")).messages).toEqual([]);
  });

  test("refuses oversize bodies and subjects, too many recipients, and to with about", async () => {
    await t.kernel.presence.register("B", TTL);
    expect(await refused(msg().send({ from: "A", to: ["B"], body: "é".repeat(MAX_BODY_BYTES / 2 + 1) }))).toContain("body must be at most 16384 bytes");
    expect(await refused(msg().send({ from: "A", to: ["B"], body: "x", subject: "s".repeat(201) }))).toContain("subject must be at most 200 characters (got 201)");
    expect(await refused(msg().send({ from: "A", to: Array.from({ length: 51 }, (_, i) => `a${i}`), body: "x" }))).toContain("to must have at most 50 recipients (got 51)");
    expect(await refused(msg().send({ from: "A", to: ["B"], about: "lock:x", body: "x" }))).toContain("either to");
    expect(await refused(msg().send({ from: "A", body: "x" }))).toContain("either to");
    expect(await rows()).toBe(0);
  });
});

describe("about a resource", () => {
  test("goes to the holder of a lock, a pool's slots, a path's claims and a task's claimant", async () => {
    await t.kernel.locks.acquire({ name: "db", agentId: "L", ttlMs: TTL, waitMs: 0 });
    await t.kernel.pools.acquire({ agentId: "S1", pool: "heavy", weight: 1, waitMs: 0, ttlMs: TTL });
    await t.kernel.paths.claim({ agentId: "P", paths: ["src/api/**"], room: "r", ttlMs: TTL });
    await t.kernel.paths.claim({ agentId: "Q", paths: ["src/web/**"], room: "r", ttlMs: TTL });
    const id = await t.kernel.tasks.push({ queue: "q", payload: "p", priority: 0 });
    await t.kernel.tasks.claim("q", "T", TTL, 0);
    expect((await msg().send({ from: "A", about: "lock:db", body: "x" })).to).toEqual(["L"]);
    expect((await msg().send({ from: "A", about: "pool:heavy", body: "x" })).to).toEqual(["S1"]);
    expect((await msg().send({ from: "A", about: "path:r:src/api/users/route.ts", body: "x" })).to).toEqual(["P"]);
    expect((await msg().send({ from: "A", about: `task:${id}`, body: "x" })).to).toEqual(["T"]);
    const m = (await read("P")).messages[0]!;
    expect(m.about).toBe("path:r:src/api/users/route.ts");
  });

  test("nobody holding it (or only the sender) is an error, and nothing is sent", async () => {
    await t.kernel.locks.acquire({ name: "mine", agentId: "A", ttlMs: TTL, waitMs: 0 });
    expect(await refused(msg().send({ from: "A", about: "lock:free", body: "x" }))).toContain("about: nobody else holds lock:free now");
    expect(await refused(msg().send({ from: "A", about: "lock:mine", body: "x" }))).toContain("nobody else holds lock:mine");
    expect(await refused(msg().send({ from: "A", about: "path:r:src/x", body: "x" }))).toContain("nobody else holds");
    expect(await refused(msg().send({ from: "A", about: "task:abc", body: "x" }))).toContain("task:ID needs a task id");
    expect(await refused(msg().send({ from: "A", about: "room:x", body: "x" }))).toContain("about must be one of lock:, task:, pool:, path:");
    expect(await rows()).toBe(0);
  });
});

describe("ack and reply", () => {
  test("an ack marks the message read, and a reply goes back to the sender in the thread", async () => {
    await t.kernel.presence.register("A", TTL);
    await t.kernel.presence.register("B", TTL);
    const sent = await msg().send({ from: "A", to: ["B"], body: "may I take route.ts?", subject: "route.ts", ackRequired: true });
    const r = await msg().ack("B", sent.id, "yes, in 5 minutes");
    expect(r.acked).toBe(true);
    expect((await read("B")).messages).toEqual([]);
    const back = (await read("A")).messages;
    expect(back.map((m) => [m.id, m.from, m.to, m.subject, m.threadId, m.body])).toEqual([[r.replyId!, "B", ["A"], "Re: route.ts", String(sent.id), "yes, in 5 minutes"]]);
    const kinds = (await t.kernel.journal.since(0, { kinds: ["message."] })).map((e) => [e.kind, e.resource, e.agentId]);
    expect(kinds).toEqual([
      ["message.sent", `thread:${sent.id}`, "A"],
      ["message.sent", `thread:${sent.id}`, "B"],
      ["message.acked", `thread:${sent.id}`, "B"],
    ]);
  });

  test("a message not in the agent's inbox cannot be acked", async () => {
    await t.kernel.presence.register("B", TTL);
    const sent = await msg().send({ from: "A", to: ["B"], body: "x" });
    expect(await refused(msg().ack("C", sent.id))).toContain(`message_id: there is no message ${sent.id} in C's inbox`);
  });
});

describe("hand-over", () => {
  test("a lock moves with a new token and a higher fence; the old token stops working; the receiver is told", async () => {
    await t.kernel.presence.register("B", TTL);
    const g = await t.kernel.locks.acquire({ name: "db", agentId: "A", ttlMs: TTL, waitMs: 0 });
    if (!g.locked) throw new Error("not locked");
    const h = await msg().handOver(g.token, "B", "migrations half done");
    expect(h.fence).toBeGreaterThan(g.fence);
    expect(h.about).toBe("lock:db");
    expect(await t.kernel.locks.release("db", g.token, undefined)).toBe(false);
    expect((await t.kernel.locks.list()).map((l) => [l.name, l.agent_id, l.fence])).toEqual([["db", "B", h.fence]]);
    const m = (await read("B")).messages[0]!;
    expect([m.from, m.about]).toEqual(["A", "lock:db"]);
    expect(m.body).toContain(h.token);
    expect(m.body).toContain("migrations half done");
    expect(await t.kernel.locks.release("db", h.token, undefined)).toBe(true);
  });

  test("a path claim and a slot move too, each with its primitive's next fence", async () => {
    await t.kernel.presence.register("B", TTL);
    const c = await t.kernel.paths.claim({ agentId: "A", paths: ["src/api/**"], room: "r", ttlMs: TTL });
    if (!c.granted) throw new Error("not granted");
    const hc = await msg().handOver(c.token, "B");
    expect(hc.fence).toBeGreaterThan(c.fence);
    expect(await t.kernel.paths.release(c.token)).toBe(false);
    expect((await t.kernel.paths.check({ paths: ["src/api/x.ts"], room: "r", agentId: "A" })).conflicts.map((x) => x.heldBy)).toEqual(["B"]);
    expect(await t.kernel.paths.release(hc.token)).toBe(true);

    const s = await t.kernel.pools.acquire({ agentId: "A", pool: "heavy", weight: 1, waitMs: 0, ttlMs: TTL });
    if (!s.granted) throw new Error("not granted");
    const hs = await msg().handOver(s.token, "B");
    expect(hs.fence).toBeGreaterThan(s.fence);
    expect(await t.kernel.pools.release(s.token)).toBe(false);
    expect((await t.kernel.pools.list())[0]!.holders.map((x) => x.agentId)).toEqual(["B"]);
    expect(await t.kernel.pools.release(hs.token)).toBe(true);
    expect((await read("B")).messages.map((m) => m.about)).toEqual(["path:r:src/api/**", "pool:heavy"]);
  });

  test("refuses an agent that is not live, a token not held, and handing to oneself; nothing moves", async () => {
    const g = await t.kernel.locks.acquire({ name: "db", agentId: "A", ttlMs: TTL, waitMs: 0 });
    if (!g.locked) throw new Error("not locked");
    await t.kernel.presence.register("gone", TTL);
    await t.kernel.presence.unregister("gone");
    expect(await refused(msg().handOver(g.token, "gone"))).toContain('to_agent: "gone" is not a live agent');
    await t.kernel.presence.register("B", TTL);
    await t.kernel.presence.register("A", TTL);
    expect(await refused(msg().handOver("0".repeat(32), "B"))).toContain("token: no lock, path claim or slot is held with this token");
    expect(await refused(msg().handOver(g.token, "A"))).toContain('to_agent: "A" already holds lock:db');
    expect((await t.kernel.locks.list()).map((l) => [l.agent_id, l.token, l.fence])).toEqual([["A", g.token, g.fence]]);
    expect(await rows()).toBe(0);
  });
});

describe("retention", () => {
  test("read messages go after seven days, unread ones stay", async () => {
    await t.kernel.presence.register("B", 30 * 24 * 3600_000);
    await msg().send({ from: "A", to: ["B"], body: "read" });
    await read("B");
    await msg().send({ from: "A", to: ["B"], body: "unread" });
    t.clock.advance(MESSAGE_RETENTION_MS + 3600_000);
    await msg().trim();
    expect((await read("B", { unreadOnly: false, peek: true })).messages.map((m) => m.body)).toEqual(["unread"]);
    const left = await t.kernel.ctx.read(() => all<{ n: number }>("SELECT COUNT(*) AS n FROM messages"));
    expect(left[0]!.n).toBe(1);
  });

  test("ids are never handed out again, even when every message was trimmed", async () => {
    await t.kernel.presence.register("B", 30 * 24 * 3600_000);
    const first = await msg().send({ from: "A", to: ["B"], body: "1" });
    const second = await msg().send({ from: "A", to: ["B"], body: "2" });
    await read("B");
    t.clock.advance(MESSAGE_RETENTION_MS + 3600_000);
    await msg().trim();
    expect((await read("B", { unreadOnly: false })).messages).toEqual([]);
    const third = await msg().send({ from: "A", to: ["B"], body: "3" });
    expect(third.id).toBeGreaterThan(second.id);
    expect(second.id).toBeGreaterThan(first.id);
  });

  test("an inbox keeps its newest MAX_PER_AGENT messages", async () => {
    expect(MAX_PER_AGENT).toBe(10_000);
    await t.kernel.presence.register("B", TTL);
    for (let i = 0; i < MAX_PER_AGENT + 5; i++) await msg().send({ from: "A", to: ["B"], body: String(i) });
    await msg().trim();
    const r = await read("B", { peek: true, limit: 1 });
    expect(r.messages[0]!.body).toBe("5");
    expect(r.unread).toBe(MAX_PER_AGENT);
  });

  test("undelivered lists unread messages the hooks have not shown yet", async () => {
    await t.kernel.presence.register("B", TTL);
    const a = await msg().send({ from: "A", to: ["B"], body: "1" });
    await msg().send({ from: "A", to: ["B"], body: "2" });
    expect((await msg().undelivered("B")).map((m) => m.body)).toEqual(["1", "2"]);
    expect(await msg().markDelivered("B", a.id)).toBe(1);
    expect((await msg().undelivered("B")).map((m) => m.body)).toEqual(["2"]);
    expect((await read("B", { peek: true })).unread).toBe(2); // delivered is not read
  });
});

describe("restart", () => {
  const r = useRestarts();
  test("unread messages survive a restart", async () => {
    const k1 = await r.openAt(1_000_000);
    await k1.kernel.presence.register("B", TTL);
    await k1.kernel.messages.send({ from: "A", to: ["B"], body: "kept" });
    await r.shut(k1);
    const k2 = await r.openAt(1_001_000);
    const got = await k2.kernel.messages.read({ agentId: "B", unreadOnly: true, sinceId: 0, waitMs: 0, limit: 50, peek: false });
    expect(got.messages.map((m) => m.body)).toEqual(["kept"]);
  });
});
