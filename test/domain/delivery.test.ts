// The hooks' delivery into the model (src/domain/delivery.ts): each unread message once, a stop
// held once per message asking for an answer, nothing of another agent's inbox.
import { describe, expect, test } from "bun:test";
import { DELIVER_LIMIT } from "../../src/domain/delivery.ts";
import { useKernel } from "../helpers/kernel.ts";

const t = useKernel();
const msg = () => t.kernel.messages;
const take = (agent: string, point: "session" | "tool" | "prompt" | "stop", held = false) => msg().delivery.take(agent, point, held);
const TTL = 60_000;

async function seen(...agents: string[]) {
  for (const a of agents) await t.kernel.presence.register(a, TTL);
}

describe("delivery into the model", () => {
  test("each unread message is delivered once, oldest first, and stays unread", async () => {
    await seen("B");
    const a = await msg().send({ from: "A", to: ["B"], body: "one" });
    const b = await msg().send({ from: "A", to: ["B"], body: "two" });
    expect((await take("B", "tool")).messages.map((m) => m.id)).toEqual([a.id, b.id]);
    expect((await take("B", "tool")).messages).toEqual([]);
    expect((await take("B", "prompt")).messages).toEqual([]);
    expect((await take("B", "session")).messages).toEqual([]);
    // Delivered is not read: read_messages still returns both.
    const r = await msg().read({ agentId: "B", unreadOnly: true, sinceId: 0, waitMs: 0, limit: 50, peek: true });
    expect(r.unread).toBe(2);
    const c = await msg().send({ from: "A", to: ["B"], body: "three" });
    expect((await take("B", "prompt")).messages.map((m) => m.id)).toEqual([c.id]);
  });

  test("a read message is never delivered; another agent's inbox is never delivered", async () => {
    await seen("B", "C");
    await msg().send({ from: "A", to: ["B"], body: "read first" });
    await msg().read({ agentId: "B", unreadOnly: true, sinceId: 0, waitMs: 0, limit: 50, peek: false });
    await msg().send({ from: "A", to: ["C"], body: "for C" });
    expect((await take("B", "tool")).messages).toEqual([]);
    expect((await take("C", "tool")).messages.map((m) => m.body)).toEqual(["for C"]);
  });

  test("a burst comes in parts of DELIVER_LIMIT, with the rest counted", async () => {
    await seen("B");
    for (let i = 0; i < DELIVER_LIMIT + 3; i++) await msg().send({ from: "A", to: ["B"], body: `m${i}` });
    const first = await take("B", "tool");
    expect(first.messages.length).toBe(DELIVER_LIMIT);
    expect(first.more).toBe(3);
    const second = await take("B", "tool");
    expect(second.messages.map((m) => m.body)).toEqual([`m${DELIVER_LIMIT}`, `m${DELIVER_LIMIT + 1}`, `m${DELIVER_LIMIT + 2}`]);
    expect(second.more).toBe(0);
  });

  test("two takes at once never both get a message", async () => {
    await seen("B");
    for (let i = 0; i < 5; i++) await msg().send({ from: "A", to: ["B"], body: `m${i}` });
    const [x, y] = await Promise.all([take("B", "tool"), take("B", "tool")]);
    const ids = [...x.messages, ...y.messages].map((m) => m.id);
    expect(ids.length).toBe(5);
    expect(new Set(ids).size).toBe(5);
  });

  test("a stop with nothing asking for an answer is let go, and shows nothing (the message waits for a tool boundary)", async () => {
    await seen("B");
    await msg().send({ from: "A", to: ["B"], body: "fyi" });
    expect(await take("B", "stop")).toEqual({ messages: [], holdFor: [], more: 0 });
    expect((await take("B", "tool")).messages.map((m) => m.body)).toEqual(["fyi"]);
  });

  test("a stop held anyway (a slot offer) carries the undelivered messages", async () => {
    await seen("B");
    await msg().send({ from: "A", to: ["B"], body: "fyi" });
    const d = await take("B", "stop", true);
    expect(d.messages.map((m) => m.body)).toEqual(["fyi"]);
    expect(d.holdFor).toEqual([]);
  });

  test("an ack_required message holds one stop, never the next, and an ack ends it", async () => {
    await seen("B");
    const m = await msg().send({ from: "A", to: ["B"], body: "please ack", ackRequired: true });
    // Shown at a tool boundary first: the stop is still held for it, once, without showing it again.
    expect((await take("B", "tool")).messages.map((x) => x.id)).toEqual([m.id]);
    const stop = await take("B", "stop");
    expect(stop.holdFor.map((x) => x.id)).toEqual([m.id]);
    expect(stop.messages).toEqual([]);
    expect((await take("B", "stop")).holdFor).toEqual([]);
    // A new one that is acked before the stop holds nothing.
    const n = await msg().send({ from: "A", to: ["B"], body: "ack me too", ackRequired: true });
    await msg().ack("B", n.id);
    expect((await take("B", "stop")).holdFor).toEqual([]);
  });

  test("an undelivered ack_required message is shown by the stop it holds", async () => {
    await seen("B");
    const m = await msg().send({ from: "A", to: ["B"], body: "please ack", ackRequired: true });
    const stop = await take("B", "stop");
    expect(stop.holdFor.map((x) => x.id)).toEqual([m.id]);
    expect(stop.messages.map((x) => x.id)).toEqual([m.id]);
    expect((await take("B", "tool")).messages).toEqual([]);
  });

  test("a release request (about a resource the agent still holds) holds one stop; once released, none", async () => {
    await t.kernel.locks.acquire({ name: "db", agentId: "L", ttlMs: TTL, waitMs: 0 });
    const m = await msg().send({ from: "A", about: "lock:db", body: "may I have db?" });
    expect(m.to).toEqual(["L"]);
    expect((await take("L", "stop")).holdFor.map((x) => x.id)).toEqual([m.id]);
    expect((await take("L", "stop")).holdFor).toEqual([]);
    // A second request about a lock L no longer holds: no hold.
    const lock = await t.kernel.locks.acquire({ name: "cache", agentId: "L", ttlMs: TTL, waitMs: 0 });
    await msg().send({ from: "A", about: "lock:cache", body: "cache?" });
    await t.kernel.locks.release("cache", (lock as { token?: string }).token, "L");
    expect((await take("L", "stop")).holdFor).toEqual([]);
  });
});
