// Messages and hand-over against a real daemon over HTTP (SPEC §13, docs/messages.md): every
// rule of send_message, read_messages, ack_message and hand_over; a blocked read woken by a send;
// unread messages kept across kill -9 and SIGTERM; the CLI's msg, inbox and hand-over; status's
// unread counts. On both stores (AIRLOCK_TEST_STORE=postgres for the shared one).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { cliEnv, type DaemonProcess, runCli, useDaemon, useDaemonStarter } from "../helpers/daemon.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(60_000);

const d = useDaemon();
let n = 0;
/** A fresh agent name per test, registered (live) unless told otherwise. */
async function agent(register = true): Promise<string> {
  const id = `agent-${++n}-${Math.random().toString(36).slice(2, 6)}`;
  if (register) expect(await d.call("register_agent", { agent_id: id, ttl_seconds: 300 })).toMatchObject({ registered: true });
  return id;
}

async function status(p: DaemonProcess = d): Promise<any> {
  return (await p.rpc("airlock/status", {})).result;
}

describe("send_message and read_messages", () => {
  test("a message is read once, oldest first, with every field; status counts it unread until then", async () => {
    const [a, b] = [await agent(), await agent()];
    const s1 = await d.call("send_message", { from: a, to: [b], body: "how long will you be in src/api?", subject: "src/api" });
    expect(s1).toEqual({ message_id: s1.message_id, to: [b], thread_id: String(s1.message_id) });
    const s2 = await d.call("send_message", { from: a, to: [b], body: "second", thread_id: s1.thread_id, ack_required: true });
    expect((await status()).inboxes).toContainEqual({ agent_id: b, unread: 2, reading: 0 });
    const r = await d.call("read_messages", { agent_id: b });
    expect(r.unread).toBe(0);
    expect(r.messages).toHaveLength(2);
    expect(r.messages[0]).toEqual({ id: s1.message_id, from: a, to: [b], subject: "src/api", body: "how long will you be in src/api?", thread_id: s1.thread_id, at: r.messages[0].at, ack_required: false });
    expect(r.messages[0].at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(r.messages[1]).toMatchObject({ id: s2.message_id, thread_id: s1.thread_id, ack_required: true });
    expect((await d.call("read_messages", { agent_id: b })).messages).toEqual([]);
    expect((await d.call("read_messages", { agent_id: b, unread_only: false, since_id: s1.message_id })).messages.map((m: any) => m.id)).toEqual([s2.message_id]);
    expect((await status()).inboxes.find((i: any) => i.agent_id === b)).toBeUndefined();
  });

  test("peek and limit", async () => {
    const [a, b] = [await agent(), await agent()];
    for (const body of ["1", "2", "3"]) await d.call("send_message", { from: a, to: [b], body });
    expect((await d.call("read_messages", { agent_id: b, peek: true })).unread).toBe(3);
    const r = await d.call("read_messages", { agent_id: b, limit: 2 });
    expect([r.messages.map((m: any) => m.body), r.unread]).toEqual([["1", "2"], 1]);
  });

  test("a blocked read is woken by a send from another client", async () => {
    const [a, b] = [await agent(), await agent()];
    const t0 = Date.now();
    const reading = d.call("read_messages", { agent_id: b, wait_seconds: 30 });
    await until("the read to block", async () => (await status()).inboxes.some((i: any) => i.agent_id === b && i.reading === 1), 10_000);
    const sent = await d.call("send_message", { from: a, to: [b], body: "wake up" });
    const r = await reading;
    expect(r.messages.map((m: any) => [m.id, m.body])).toEqual([[sent.message_id, "wake up"]]);
    expect(Date.now() - t0).toBeLessThan(25_000);
  });

  test("an away agent still gets it; one never seen is refused as unknown, and nothing is sent", async () => {
    const [a, away] = [await agent(), await agent()];
    await d.call("unregister_agent", { agent_id: away });
    await d.call("send_message", { from: a, to: [away], body: "when you are back" });
    expect((await d.call("read_messages", { agent_id: away })).messages.map((m: any) => m.body)).toEqual(["when you are back"]);
    const r = await d.call("send_message", { from: a, to: [away, "bobb-typo"], body: "x" });
    expect(r.isError).toBe(true);
    expect(r.error).toContain('to: unknown agent "bobb-typo"');
    expect((await d.call("read_messages", { agent_id: away })).messages).toEqual([]);
  });

  test("refuses oversize bodies and subjects, too many or no recipients, naming the field and the rule", async () => {
    const [a, b] = [await agent(), await agent()];
    const cases: [Record<string, unknown>, string][] = [
      [{ from: a, to: [b], body: "x".repeat(16 * 1024 + 1) }, "body must be at most 16384 bytes"],
      [{ from: a, to: [b], body: "é".repeat(8 * 1024 + 1) }, "body must be at most 16384 bytes"],
      [{ from: a, to: [b], body: "x", subject: "s".repeat(201) }, "subject must be at most 200 characters (got 201)"],
      [{ from: a, to: Array.from({ length: 51 }, (_, i) => `${b}-${i}`), body: "x" }, "to must have at most 50 recipients (got 51)"],
      [{ from: a, to: [], body: "x" }, "to must name at least one agent"],
      [{ from: a, body: "x" }, "give either to"],
      [{ from: a, to: [b], about: "lock:x", body: "x" }, "give either to"],
      [{ from: a, to: [b] }, "missing body"],
      [{ to: [b], body: "x" }, "missing from"],
    ];
    for (const [args, message] of cases) {
      const r = await d.call("send_message", args);
      expect([r.isError, r.error]).toEqual([true, expect.stringContaining(message)]);
    }
    expect((await d.call("read_messages", { agent_id: b, peek: true })).unread).toBe(0);
  });
});

describe("about a resource", () => {
  test("goes to whoever holds a lock, a pool's slots, a path's claims, a task; nobody holding it is an error", async () => {
    const [a, l, p, s, t] = [await agent(), await agent(), await agent(), await agent(), await agent()];
    const lock = `db-${n}`;
    await d.call("lock_resource", { name: lock, agent_id: l, ttl_seconds: 60 });
    await d.call("configure_pool", { pool: `pool-${n}`, capacity: 1, expected_version: 0, author: "e2e", reason: "test" });
    await d.call("acquire_slot", { agent_id: s, pool: `pool-${n}` });
    await d.call("claim_paths", { agent_id: p, paths: ["src/api/**"], room: `room-${n}` });
    const task = await d.call("push_task", { queue: `q-${n}`, payload: "p" });
    await d.call("claim_next_task", { queue: `q-${n}`, agent_id: t });
    expect((await d.call("send_message", { from: a, about: `lock:${lock}`, body: "x" })).to).toEqual([l]);
    expect((await d.call("send_message", { from: a, about: `pool:pool-${n}`, body: "x" })).to).toEqual([s]);
    expect((await d.call("send_message", { from: a, about: `path:room-${n}:src/api/users/route.ts`, body: "may I?" })).to).toEqual([p]);
    expect((await d.call("send_message", { from: a, about: `task:${task.id}`, body: "x" })).to).toEqual([t]);
    expect((await d.call("read_messages", { agent_id: p })).messages[0]).toMatchObject({ from: a, about: `path:room-${n}:src/api/users/route.ts`, body: "may I?" });
    for (const about of [`lock:free-${n}`, `path:room-${n}:docs/x.md`, `pool:empty-${n}`]) {
      const r = await d.call("send_message", { from: a, about, body: "x" });
      expect([r.isError, r.error]).toEqual([true, expect.stringContaining(`about: nobody else holds ${about} now`)]);
    }
    const bad = await d.call("send_message", { from: a, about: "room:x", body: "x" });
    expect(bad.error).toContain("about must be one of lock:, task:, pool:, path:");
  });
});

describe("ack_message", () => {
  test("acks, and a reply goes back to the sender in the same thread; the feed carries both", async () => {
    const [a, b] = [await agent(), await agent()];
    const since = (await d.call("watch_changes", {})).revision;
    const sent = await d.call("send_message", { from: a, to: [b], body: "may I take route.ts?", subject: "route.ts", ack_required: true });
    const ack = await d.call("ack_message", { agent_id: b, message_id: sent.message_id, reply: "yes" });
    expect(ack).toEqual({ acked: true, reply_id: expect.any(Number) });
    const back = (await d.call("read_messages", { agent_id: a })).messages;
    expect(back).toEqual([expect.objectContaining({ id: ack.reply_id, from: b, to: [a], subject: "Re: route.ts", thread_id: sent.thread_id, body: "yes" })]);
    const feed = await d.call("watch_changes", { since_revision: since, kinds: ["message."] });
    expect(feed.changes.map((c: any) => [c.kind, c.resource, c.agent_id, c.id])).toEqual([
      ["message.sent", `thread:${sent.thread_id}`, a, sent.message_id],
      ["message.sent", `thread:${sent.thread_id}`, b, ack.reply_id],
      ["message.acked", `thread:${sent.thread_id}`, b, sent.message_id],
    ]);
    expect(JSON.stringify(feed)).not.toContain("route.ts?"); // no bodies in the feed
    const wrong = await d.call("ack_message", { agent_id: a, message_id: sent.message_id });
    expect(wrong.error).toContain(`message_id: there is no message ${sent.message_id} in ${a}'s inbox`);
  });
});

describe("hand_over", () => {
  test("a lock: the old token fails, the new one works, the fence is higher, the receiver got the token", async () => {
    const [a, b] = [await agent(), await agent()];
    const name = `handed-${n}`;
    const g = await d.call("lock_resource", { name, agent_id: a, ttl_seconds: 60 });
    const h = await d.call("hand_over", { token: g.lock_token, to_agent: b, note: "migrations half done" });
    expect(h).toMatchObject({ handed_over: true, to_agent: b, resource: `lock:${name}` });
    expect(h.fence).toBeGreaterThan(g.fence);
    expect(await d.call("renew_lock", { name, lock_token: g.lock_token })).toMatchObject({ renewed: false });
    expect(await d.call("unlock_resource", { name, lock_token: g.lock_token })).toEqual({ released: false });
    const m = (await d.call("read_messages", { agent_id: b })).messages;
    expect(m).toHaveLength(1);
    expect(m[0]).toMatchObject({ from: a, about: `lock:${name}` });
    expect(m[0].body).toContain(h.token);
    expect(m[0].body).toContain("migrations half done");
    expect(await d.call("unlock_resource", { name, lock_token: h.token })).toEqual({ released: true });
  });

  test("a path claim and a slot, each with its new token and a higher fence", async () => {
    const [a, b] = [await agent(), await agent()];
    const c = await d.call("claim_paths", { agent_id: a, paths: ["src/x/**"], room: `ho-${n}` });
    const hc = await d.call("hand_over", { token: c.claim_token, to_agent: b });
    expect(hc.fence).toBeGreaterThan(c.fence);
    expect(await d.call("release_paths", { claim_token: c.claim_token })).toEqual({ released: false });
    expect((await d.call("list_path_claims", { room: `ho-${n}` })).map((x: any) => x.agent_id)).toEqual([b]);
    expect(await d.call("release_paths", { claim_token: hc.token })).toEqual({ released: true });
    const pool = `ho-pool-${n}`;
    await d.call("configure_pool", { pool, capacity: 1, expected_version: 0, author: "e2e", reason: "test" });
    const s = await d.call("acquire_slot", { agent_id: a, pool });
    const hs = await d.call("hand_over", { token: s.slot_token, to_agent: b });
    expect(hs.fence).toBeGreaterThan(s.fence);
    expect(await d.call("release_slot", { slot_token: s.slot_token })).toEqual({ released: false });
    expect(await d.call("release_slot", { slot_token: hs.token })).toEqual({ released: true });
    expect((await d.call("read_messages", { agent_id: b })).messages.map((m: any) => m.about)).toEqual([`path:ho-${n}:src/x/**`, `pool:${pool}`]);
  });

  test("refuses an agent not alive and a token not held; nothing moves", async () => {
    const [a, gone] = [await agent(), await agent()];
    await d.call("unregister_agent", { agent_id: gone });
    const name = `kept-${n}`;
    const g = await d.call("lock_resource", { name, agent_id: a, ttl_seconds: 60 });
    const r1 = await d.call("hand_over", { token: g.lock_token, to_agent: gone });
    expect(r1.error).toContain(`to_agent: "${gone}" is not a live agent`);
    const r2 = await d.call("hand_over", { token: "f".repeat(32), to_agent: a });
    expect(r2.error).toContain("token: no lock, path claim or slot is held with this token");
    expect((await d.call("list_locks")).find((l: any) => l.name === name)).toMatchObject({ agent_id: a, fence: g.fence });
    expect(await d.call("unlock_resource", { name, lock_token: g.lock_token })).toEqual({ released: true });
  });
});

describe("the CLI", () => {
  test("msg, inbox and hand-over; an unknown flag is refused with exit 2", async () => {
    const [b, c] = [await agent(), await agent()];
    const env = cliEnv(d);
    const sent = await runCli(["msg", b, "--agent", "cli-a", "--subject", "hello", "the", "build", "is", "green"], env);
    expect([sent.code, sent.stdout]).toEqual([0, expect.stringMatching(new RegExp(`^sent #\\d+ to ${b} \\(thread \\d+\\)`))]);
    const inbox = await runCli(["inbox", "--agent", b], env);
    expect(inbox.code).toBe(0);
    expect(inbox.stdout).toContain(`cli-a → ${b}`);
    expect(inbox.stdout).toContain("    the build is green");
    expect((await runCli(["inbox", "--agent", b], env)).stdout).toContain("(no messages)");
    const name = `cli-lock-${n}`;
    const g = await d.call("lock_resource", { name, agent_id: b, ttl_seconds: 60 });
    const about = await runCli(["msg", "--about", `lock:${name}`, "--agent", c, "when", "are", "you", "done?"], env);
    expect([about.code, about.stdout]).toEqual([0, expect.stringContaining(`to ${b}`)]);
    const ho = await runCli(["hand-over", g.lock_token, c, "--note", "all yours"], env);
    expect([ho.code, ho.stdout]).toEqual([0, expect.stringContaining(`handed lock:${name} to ${c}`)]);
    const got = await runCli(["inbox", "--agent", c, "--json"], env);
    expect(JSON.parse(got.stdout.trim().split("\n")[0]!)).toMatchObject({ from: b, about: `lock:${name}` });
    const typo = await runCli(["msg", "nobody-at-all", "hi"], env);
    expect([typo.code, typo.stderr]).toEqual([1, expect.stringContaining('unknown agent "nobody-at-all"')]);
    await d.call("send_message", { from: "cli-a", to: [c], body: "unread, for status" });
    const shown = await runCli(["status"], { ...env, NO_COLOR: "1" });
    expect(shown.stdout).toContain("INBOXES");
    expect(shown.stdout).toMatch(new RegExp(`${c}\\s+1 unread`));
    const usage = await runCli(["inbox", "--folow"], env);
    expect([usage.code, usage.stderr]).toEqual([2, expect.stringContaining("did you mean --follow?")]);
  });
});

describe("a restart", () => {
  const start = useDaemonStarter();
  for (const signal of ["SIGTERM", 9] as const) {
    test(`keeps unread messages (${signal === 9 ? "kill -9" : "SIGTERM"})`, async () => {
      const first = await start();
      expect(await first.call("register_agent", { agent_id: "B", ttl_seconds: 300 })).toMatchObject({ registered: true });
      await first.call("send_message", { from: "A", to: ["B"], body: "read before" });
      await first.call("read_messages", { agent_id: "B" });
      const kept = await first.call("send_message", { from: "A", to: ["B"], body: "unread across the restart" });
      expect(await first.kill(signal)).not.toBeNull();
      const again = await start({ home: first.home, db: first.db });
      const r = await again.call("read_messages", { agent_id: "B" });
      expect(r.messages.map((m: any) => [m.id, m.body])).toEqual([[kept.message_id, "unread across the restart"]]);
      await again.kill();
    });
  }
});
