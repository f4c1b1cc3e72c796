// Messages and hand-over across two real daemons on one PostgreSQL database (SPEC §13,
// docs/messages.md, "Several daemons"): a message sent on one is read on the other; a read
// blocked on one is woken by a send on the other (the waiter in the shared lines, the grant
// through `grants` and a NOTIFY); a lock, claim and slot held on one are handed over on the
// other, and the old token stops working on both; the hooks' delivery asked of both at once
// never shows a message twice, nor do reads of one inbox asked of both at once; a read that does
// not block and an ack take no exclusive turn, and an ack's reply still wakes a read blocked on
// the other daemon. Skipped without a server (AIRLOCK_TEST_PG).
import { expect, setDefaultTimeout, test } from "bun:test";
import type { DaemonProcess } from "../helpers/daemon.ts";
import { answered, ordersOfTracedPair, useCluster } from "../helpers/cluster.ts";
import { describePg } from "../helpers/pg.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(60_000);

async function readers(d: DaemonProcess, agentId: string): Promise<number> {
  const inboxes = ((await d.rpc("airlock/status")).result.inboxes ?? []) as { agent_id: string; reading: number }[];
  return inboxes.find((i) => i.agent_id === agentId)?.reading ?? 0;
}

describePg("messages on two daemons sharing a store", () => {
  const c = useCluster(2);

  test("a message sent on one daemon is read on the other, and the typo guard sees agents of both", async () => {
    const [one, two] = c.daemons as [DaemonProcess, DaemonProcess];
    await two.call("register_agent", { agent_id: "reader-1", ttl_seconds: 300 });
    const sent = await one.call("send_message", { from: "writer", to: ["reader-1"], body: "from daemon one" });
    expect(sent.isError).toBeUndefined();
    const r = await two.call("read_messages", { agent_id: "reader-1" });
    expect(r.messages.map((m: any) => [m.id, m.from, m.body])).toEqual([[sent.message_id, "writer", "from daemon one"]]);
    expect((await one.call("read_messages", { agent_id: "reader-1", peek: true })).unread).toBe(0);
    expect((await one.call("send_message", { from: "writer", to: ["nobody-anywhere"], body: "x" })).error).toContain("unknown agent");
  });

  test("a read blocked on one daemon is woken by a send on the other", async () => {
    const [one, two] = c.daemons as [DaemonProcess, DaemonProcess];
    await one.call("register_agent", { agent_id: "reader-2", ttl_seconds: 300 });
    const t0 = Date.now();
    const reading = one.call("read_messages", { agent_id: "reader-2", wait_seconds: 30 });
    // The other daemon sees the blocked read in the shared lines before it sends.
    await until("daemon two to see the blocked read", async () => (await readers(two, "reader-2")) === 1, 10_000);
    const sent = await two.call("send_message", { from: "writer", to: ["reader-2"], body: "from daemon two" });
    const r = await reading;
    expect(r.messages.map((m: any) => [m.id, m.body])).toEqual([[sent.message_id, "from daemon two"]]);
    expect(Date.now() - t0).toBeLessThan(25_000);
  });

  test("the hooks' delivery asked of both daemons at once shows every message exactly once", async () => {
    const [one, two] = c.daemons as [DaemonProcess, DaemonProcess];
    await one.call("register_agent", { agent_id: "claude-code:both", ttl_seconds: 300 });
    const ids: number[] = [];
    for (let i = 0; i < 8; i++) ids.push((await two.call("send_message", { from: "writer", to: ["claude-code:both"], body: `note ${i}` })).message_id);
    const deliver = (d: DaemonProcess) => d.rpc("airlock/deliver", { agent_id: "claude-code:both", point: "tool" });
    const rounds = await Promise.all([deliver(one), deliver(two), deliver(one), deliver(two)]);
    const shown = rounds.flatMap((r) => (r.result.messages as { id: number }[]).map((m) => m.id)).sort((a, b) => a - b);
    expect(shown).toEqual(ids);
    // Delivered, still unread, on both.
    expect((await one.call("read_messages", { agent_id: "claude-code:both", peek: true })).unread).toBe(8);
    expect((await deliver(two)).result.messages).toEqual([]);
  });

  test("a lock, a claim and a slot held on one daemon are handed over on the other", async () => {
    const [one, two] = c.daemons as [DaemonProcess, DaemonProcess];
    await one.call("register_agent", { agent_id: "giver", ttl_seconds: 300 });
    await two.call("register_agent", { agent_id: "taker", ttl_seconds: 300 });
    const g = await one.call("lock_resource", { name: "cluster-handed", agent_id: "giver", ttl_seconds: 60 });
    const h = await two.call("hand_over", { token: g.lock_token, to_agent: "taker", note: "yours" });
    expect(h).toMatchObject({ handed_over: true, to_agent: "taker", resource: "lock:cluster-handed" });
    expect(h.fence).toBeGreaterThan(g.fence);
    expect(await one.call("unlock_resource", { name: "cluster-handed", lock_token: g.lock_token })).toEqual({ released: false });

    const claim = await one.call("claim_paths", { agent_id: "giver", paths: ["src/**"], room: "cluster-room" });
    const hc = await two.call("hand_over", { token: claim.claim_token, to_agent: "taker" });
    expect(hc.fence).toBeGreaterThan(claim.fence);
    // Daemon one's index follows the move: the claim is taker's there too.
    expect((await one.call("check_paths", { paths: ["src/a.ts"], room: "cluster-room", agent_id: "giver" })).conflicts.map((x: any) => x.held_by)).toEqual(["taker"]);
    // And to anyone else: the giver's claim under its old token is gone from that index (its
    // row took the new token in place; airlock_gone says so, migration 013).
    expect((await one.call("check_paths", { paths: ["src/a.ts"], room: "cluster-room", agent_id: "bystander" })).conflicts.map((x: any) => x.held_by)).toEqual(["taker"]);
    expect(await one.call("release_paths", { claim_token: claim.claim_token })).toEqual({ released: false });

    await one.call("configure_pool", { pool: "cluster-pool", capacity: 1, expected_version: 0, author: "test", reason: "test" });
    const slot = await one.call("acquire_slot", { agent_id: "giver", pool: "cluster-pool" });
    const hs = await two.call("hand_over", { token: slot.slot_token, to_agent: "taker" });
    expect(hs.fence).toBeGreaterThan(slot.fence);
    expect(await one.call("release_slot", { slot_token: slot.slot_token })).toEqual({ released: false });

    const got = (await one.call("read_messages", { agent_id: "taker" })).messages;
    expect(got.map((m: any) => [m.from, m.about])).toEqual([
      ["giver", "lock:cluster-handed"],
      ["giver", "path:cluster-room:src/**"],
      ["giver", "pool:cluster-pool"],
    ]);
    expect(got[0].body).toContain(h.token);
    expect(await one.call("unlock_resource", { name: "cluster-handed", lock_token: h.token })).toEqual({ released: true });
    expect(await one.call("release_paths", { claim_token: hc.token })).toEqual({ released: true });
    expect(await one.call("release_slot", { slot_token: hs.token })).toEqual({ released: true });
  });
  test("reads of one inbox asked of both daemons at once take each unread message once", async () => {
    const [one, two] = c.daemons as [DaemonProcess, DaemonProcess];
    await one.call("register_agent", { agent_id: "racer", ttl_seconds: 300 });
    const ids: number[] = [];
    for (let i = 0; i < 24; i++) ids.push((await two.call("send_message", { from: "writer", to: ["racer"], body: `race ${i}` })).message_id);
    const reads = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? one : two).call("read_messages", { agent_id: "racer", limit: 3 })));
    const taken = reads.flatMap((r) => (r.messages as { id: number }[]).map((m) => m.id));
    expect(new Set(taken).size).toBe(taken.length);
    const rest = (await one.call("read_messages", { agent_id: "racer", limit: 50 })).messages.map((m: { id: number }) => m.id);
    expect([...taken, ...rest].sort((a, b) => a - b)).toEqual(ids);
    expect((await two.call("read_messages", { agent_id: "racer", peek: true })).unread).toBe(0);
  });

  test("an ack's reply to a sender blocked reading on the other daemon wakes it; an ack of a message not there is refused", async () => {
    const [one, two] = c.daemons as [DaemonProcess, DaemonProcess];
    await one.call("register_agent", { agent_id: "asker", ttl_seconds: 300 });
    await two.call("register_agent", { agent_id: "answerer", ttl_seconds: 300 });
    const q = await one.call("send_message", { from: "asker", to: ["answerer"], body: "may I?", subject: "npm install", ack_required: true });
    const waiting = one.call("read_messages", { agent_id: "asker", wait_seconds: 30 });
    await until("daemon two to see the blocked read", async () => (await readers(two, "asker")) === 1, 10_000);
    const a = await two.call("ack_message", { agent_id: "answerer", message_id: q.message_id, reply: "go ahead" });
    const r = await answered("the read blocked on daemon one", waiting);
    expect(r.messages.map((m: any) => [m.id, m.from, m.body, m.subject, m.thread_id])).toEqual([[a.reply_id, "answerer", "go ahead", "Re: npm install", String(q.message_id)]]);
    const refused = await two.call("ack_message", { agent_id: "answerer", message_id: q.message_id + 1_000 });
    expect(refused.error).toContain(`message_id: there is no message ${q.message_id + 1_000} in answerer's inbox`);
  });
});

// read_messages and ack_message used to be transactions in the global order, each stopping
// every daemon's row bodies; one that does not block is a row body now. The traced daemon's
// transactions (AIRLOCK_TRACE) over reads that find messages, a read that finds none and does
// not wait, and acks with and without a reply count none in the exclusive order.
describePg("reads and acks on two daemons", () => {
  test("take no exclusive turn: a read that finds messages (waiting or not), one that finds none and does not wait, an ack, an ack's reply", async () => {
    const orders = await ordersOfTracedPair(async (d1, d2) => {
      await d1.call("register_agent", { agent_id: "inbox-a", ttl_seconds: 300 });
      await d1.call("register_agent", { agent_id: "inbox-b", ttl_seconds: 300 });
      const sent: number[] = [];
      for (let i = 0; i < 3; i++) sent.push((await d1.call("send_message", { from: "inbox-b", to: ["inbox-a"], body: `m${i}`, ack_required: true })).message_id);
      const from = Date.now();
      const first = await d2.call("read_messages", { agent_id: "inbox-a", limit: 2 });
      const second = await d2.call("read_messages", { agent_id: "inbox-a", wait_seconds: 20 });
      const none = await d2.call("read_messages", { agent_id: "inbox-a" });
      const acked = await d2.call("ack_message", { agent_id: "inbox-a", message_id: sent[0], reply: "done" });
      const plain = await d2.call("ack_message", { agent_id: "inbox-a", message_id: sent[1] });
      const to = Date.now();
      expect(first.messages.map((m: { id: number }) => m.id)).toEqual(sent.slice(0, 2));
      expect(first.unread).toBe(1);
      expect(second.messages.map((m: { id: number }) => m.id)).toEqual([sent[2]]);
      expect([none.messages, none.unread]).toEqual([[], 0]);
      expect(acked.reply_id).toBeGreaterThan(sent[2]!);
      expect(plain).toEqual({ acked: true });
      const back = await d1.call("read_messages", { agent_id: "inbox-b" });
      expect(back.messages.map((m: any) => [m.id, m.body, m.thread_id])).toEqual([[acked.reply_id, "done", String(sent[0])]]);
      const journal = await d1.call("watch_changes", { kinds: ["message.acked"] });
      expect(journal.changes.map((e: any) => [e.agent_id, e.id, e.reply])).toEqual([["inbox-a", sent[0], acked.reply_id], ["inbox-a", sent[1], undefined]]);
      return { from, to };
    });
    expect(orders).toContain("order shared");
    expect(orders.filter((l) => l === "order exclusive")).toEqual([]);
  });
});
