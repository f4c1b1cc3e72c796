import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { WaitQueue } from "../../src/domain/wait.ts";
import { makeKernel, type TestKernel } from "../helpers/kernel.ts";
import { flush, track } from "./support.ts";

const GRACE_MS = 5_000;

let t: TestKernel;
let q: WaitQueue<{ who: string }, string>;

beforeEach(async () => {
  t = await makeKernel();
  q = t.kernel.ctx.waitQueue<{ who: string }, string>("test", GRACE_MS);
});

afterEach(async () => {
  q.clear();
  t.kernel.close();
  await flush();
  t.store.close();
});

const whos = (key: string) => q.line(key).map((w) => w.req.who);

describe("WaitQueue", () => {
  test("keeps each key's line in arrival order with 1-based positions", () => {
    const a = q.enqueue("r", { who: "a" });
    const other = q.enqueue("s", { who: "x" });
    const b = q.enqueue("r", { who: "b" });
    const c = q.enqueue("r", { who: "c" });
    expect(whos("r")).toEqual(["a", "b", "c"]);
    expect([q.position(a), q.position(b), q.position(c), q.position(other)]).toEqual([1, 2, 3, 1]);
    expect(q.size).toBe(4);
    expect([...q.keys()].sort()).toEqual(["r", "s"]);
  });

  test("finds a waiter by its wake token only on its own key", () => {
    const a = q.enqueue("r", { who: "a" });
    expect(q.find(a.token, "r")).toBe(a);
    expect(q.find(a.token, "s")).toBeUndefined();
    expect(q.find(undefined, "r")).toBeUndefined();
    expect(q.find("not-a-token", "r")).toBeUndefined();
  });

  test("gives every waiter a distinct unguessable token", () => {
    const tokens = new Set(Array.from({ length: 50 }, (_, i) => q.enqueue("r", { who: `${i}` }).token));
    expect(tokens.size).toBe(50);
    for (const tok of tokens) expect(tok).toMatch(/^[0-9a-f]{32}$/);
  });

  test("firstAttached skips waiters whose call is not blocked", async () => {
    const a = q.enqueue("r", { who: "a" });
    const b = q.enqueue("r", { who: "b" });
    expect(q.firstAttached("r")).toBeUndefined();
    const call = track(q.block(b, t.clock.now() + 1_000));
    expect(b.attached).toBe(true);
    expect(a.attached).toBe(false);
    expect(q.firstAttached("r")).toBe(b);
    t.store.tx(function* () {
      q.grant(b, "yours");
    });
    await flush();
    expect(call.value).toEqual({ kind: "granted", value: "yours" });
  });

  test("a blocked call is answered with the granted value", async () => {
    const w = q.enqueue("r", { who: "a" });
    const call = q.block(w, t.clock.now() + 1_000);
    t.store.tx(function* () {
      q.grant(w, "the-lock");
    });
    expect(await call).toEqual({ kind: "granted", value: "the-lock" });
    expect(q.line("r")).toEqual([]);
    expect(q.size).toBe(0);
  });

  test("answers a grant only after the granting transaction commits", async () => {
    const w = q.enqueue("r", { who: "a" });
    const call = track(q.block(w, t.clock.now() + 1_000));
    let answeredInsideTx: boolean | undefined;
    t.store.tx(function* () {
      q.grant(w, "v");
      expect(q.line("r")).toEqual([]); // it leaves the line inside the transaction
      answeredInsideTx = call.done;
    });
    await flush();
    expect(answeredInsideTx).toBe(false);
    expect(call.done).toBe(true);
  });

  test("answers a call promised a grant by a transaction that rolled back as aborted, never granted", async () => {
    const w = q.enqueue("r", { who: "a" });
    const call = track(q.block(w, t.clock.now() + 1_000));
    expect(() =>
      t.store.tx(function* () {
        q.grant(w, "v");
        throw new Error("boom");
      }),
    ).toThrow("boom");
    await flush();
    expect(call.value).toEqual({ kind: "aborted" });
  });

  test("times out at the exact deadline and not before", async () => {
    const w = q.enqueue("r", { who: "a" });
    const call = track(q.block(w, t.clock.now() + 1_000));
    t.clock.advance(999);
    await flush();
    expect(call.done).toBe(false);
    t.clock.advance(1);
    await flush();
    expect(call.value).toEqual({ kind: "timeout" });
  });

  test("answers aborted when the signal aborts, and at once when it already has", async () => {
    const w = q.enqueue("r", { who: "a" });
    const ac = new AbortController();
    const call = track(q.block(w, t.clock.now() + 10_000, ac.signal));
    await flush();
    expect(call.done).toBe(false);
    ac.abort();
    await flush();
    expect(call.value).toEqual({ kind: "aborted" });
    expect(w.attached).toBe(false);

    const v = q.enqueue("r", { who: "b" });
    const gone = new AbortController();
    gone.abort();
    expect(await q.block(v, t.clock.now() + 10_000, gone.signal)).toEqual({ kind: "aborted" });
    expect(v.attached).toBe(false);
  });

  test("a timed-out waiter is detached but keeps its place until the grace period ends", async () => {
    const a = q.enqueue("r", { who: "a" });
    q.enqueue("r", { who: "b" });
    const call = q.block(a, t.clock.now() + 1_000);
    t.clock.advance(1_000);
    expect(await call).toEqual({ kind: "timeout" });
    expect(a.attached).toBe(false);
    expect(q.firstAttached("r")).toBeUndefined();
    expect(whos("r")).toEqual(["a", "b"]);
    expect(q.position(a)).toBe(1);
    t.clock.advance(GRACE_MS - 1);
    expect(whos("r")).toEqual(["a", "b"]);
    t.clock.advance(1);
    expect(whos("r")).toEqual(["b"]);
    expect(q.find(a.token, "r")).toBeUndefined();
  });

  test("an aborted waiter is detached and keeps its place for the grace period too", async () => {
    const a = q.enqueue("r", { who: "a" });
    const ac = new AbortController();
    const call = q.block(a, t.clock.now() + 60_000, ac.signal);
    t.clock.advance(100);
    ac.abort();
    expect(await call).toEqual({ kind: "aborted" });
    expect(q.position(a)).toBe(1);
    t.clock.advance(GRACE_MS);
    expect(q.size).toBe(0);
  });

  test("blocking again with the same waiter cancels its grace and keeps its place", async () => {
    const a = q.enqueue("r", { who: "a" });
    q.enqueue("r", { who: "b" });
    const first = q.block(a, t.clock.now() + 1_000);
    t.clock.advance(1_000);
    expect(await first).toEqual({ kind: "timeout" });
    t.clock.advance(GRACE_MS - 10);
    const again = track(q.block(a, t.clock.now() + 60_000));
    t.clock.advance(GRACE_MS * 3);
    await flush();
    expect(again.done).toBe(false);
    expect(q.position(a)).toBe(1);
    expect(q.firstAttached("r")).toBe(a);
    t.store.tx(function* () {
      q.grant(a, "finally");
    });
    await flush();
    expect(again.value).toEqual({ kind: "granted", value: "finally" });
  });

  test("keep gives a detached waiter a fresh grace period from now", async () => {
    const a = q.enqueue("r", { who: "a" });
    const call = q.block(a, t.clock.now() + 1_000);
    t.clock.advance(1_000);
    await call;
    t.clock.advance(GRACE_MS - 1);
    q.keep(a);
    t.clock.advance(GRACE_MS - 1);
    expect(q.position(a)).toBe(1);
    t.clock.advance(1);
    expect(q.size).toBe(0);
  });

  test("keep leaves an attached waiter's call and deadline alone", async () => {
    const a = q.enqueue("r", { who: "a" });
    const call = track(q.block(a, t.clock.now() + 1_000));
    q.keep(a);
    t.clock.advance(999);
    await flush();
    expect(call.done).toBe(false);
    expect(a.attached).toBe(true);
    t.clock.advance(1);
    await flush();
    expect(call.value).toEqual({ kind: "timeout" });
  });

  test("a second block on the same waiter answers the first call as aborted", async () => {
    const a = q.enqueue("r", { who: "a" });
    const first = track(q.block(a, t.clock.now() + 10_000));
    const second = track(q.block(a, t.clock.now() + 10_000));
    await flush();
    expect(first.value).toEqual({ kind: "aborted" });
    expect(second.done).toBe(false);
    t.store.tx(function* () {
      q.grant(a, "v");
    });
    await flush();
    expect(second.value).toEqual({ kind: "granted", value: "v" });
  });

  test("with no grace a waiter leaves the line as soon as its call returns", async () => {
    const eager = t.kernel.ctx.waitQueue<{ who: string }, string>("eager", 0);
    const a = eager.enqueue("r", { who: "a" });
    const call = eager.block(a, t.clock.now() + 500);
    t.clock.advance(500);
    expect(await call).toEqual({ kind: "timeout" });
    expect(eager.line("r")).toEqual([]);
    expect(eager.size).toBe(0);
  });

  test("remove answers a blocked call as aborted and frees its place", async () => {
    const a = q.enqueue("r", { who: "a" });
    const b = q.enqueue("r", { who: "b" });
    const call = q.block(a, t.clock.now() + 10_000);
    q.remove(a);
    expect(await call).toEqual({ kind: "aborted" });
    expect(q.position(b)).toBe(1);
    // Its deadline is gone with it: time passing changes nothing.
    t.clock.advance(20_000);
    expect(whos("r")).toEqual(["b"]);
  });

  test("removeWhere removes matching waiters in every line and counts them", async () => {
    q.enqueue("r", { who: "dead" });
    q.enqueue("r", { who: "live" });
    const blocked = q.enqueue("s", { who: "dead" });
    q.enqueue("s", { who: "live" });
    const call = q.block(blocked, t.clock.now() + 10_000);
    expect(q.removeWhere((w) => w.req.who === "dead").length).toBe(2);
    expect(await call).toEqual({ kind: "aborted" });
    expect(whos("r")).toEqual(["live"]);
    expect(whos("s")).toEqual(["live"]);
    expect(q.size).toBe(2);
  });

  test("a revoked grant puts its waiter back at its place, unless its agent already holds a newer place", async () => {
    // The queue's revoke is the primitive's hand-back; here it records what it is asked to do.
    let onRevoke: (w: { token: string }) => void = () => {};
    const rq = t.kernel.ctx.waitQueue<{ who: string }, string>("revoking", GRACE_MS, {
      revoke: function* (w) {
        onRevoke(w);
      },
    });
    const rwhos = (key: string) => rq.line(key).map((w) => w.req.who);
    const a = rq.enqueue("r", { who: "a" }, "A");
    const b = rq.enqueue("r", { who: "b" }, "B");
    const gone = new AbortController();
    const call = track(rq.block(a, t.clock.now() + 10_000, gone.signal));
    let revoked = 0;
    onRevoke = () => {
      revoked++;
      expect(rq.reinstate(a)).toBe(true);
    };
    t.store.tx(function* () {
      rq.grant(a, "v");
      gone.abort();
    });
    await flush();
    expect(call.value).toEqual({ kind: "aborted" });
    expect(revoked).toBe(1);
    expect(rwhos("r")).toEqual(["a", "b"]);

    // The same again, but A calls anew before the hand-back: its newer place is kept, untouched.
    rq.remove(a);
    const a2 = rq.enqueue("r", { who: "a2" }, "A");
    const gone2 = new AbortController();
    track(rq.block(a2, t.clock.now() + 10_000, gone2.signal));
    let newer: typeof a2 | undefined;
    onRevoke = () => expect(rq.reinstate(a2)).toBe(false);
    t.store.tx(function* () {
      rq.grant(a2, "v");
      newer = rq.enqueue("r", { who: "a3" }, "A");
      gone2.abort();
    });
    const blocked = track(rq.block(newer!, t.clock.now() + 10_000));
    await flush();
    expect(rwhos("r")).toEqual(["b", "a3"]);
    expect(blocked.done).toBe(false);
    expect(rq.position(b)).toBe(1);
    rq.clear();
  });

  test("clear answers every blocked call as aborted and empties every line", async () => {
    const a = q.enqueue("r", { who: "a" });
    const b = q.enqueue("s", { who: "b" });
    q.enqueue("s", { who: "c" });
    const calls = [q.block(a, t.clock.now() + 10_000), q.block(b, t.clock.now() + 10_000)];
    q.clear();
    expect(await Promise.all(calls)).toEqual([{ kind: "aborted" }, { kind: "aborted" }]);
    expect(q.size).toBe(0);
    expect([...q.keys()]).toEqual([]);
  });
});

describe("the block watch and withdraw (call tasks)", () => {
  test("a call blocking with a watched signal is reported with its queue and place; other calls are not", async () => {
    const watched = new AbortController();
    const seen: string[] = [];
    const stop = t.kernel.ctx.watchBlocks(watched.signal, (queue, w) => seen.push(`${queue.name}:${(w.req as { who: string }).who}:${w.token}`));
    const a = q.enqueue("r", { who: "a" });
    const b = q.enqueue("r", { who: "b" });
    const pa = track(q.block(a, t.clock.now() + 1000, new AbortController().signal));
    const pb = track(q.block(b, t.clock.now() + 1000, watched.signal));
    expect(seen).toEqual([`test:b:${b.token}`]);
    stop();
    q.grant(b, "x");
    await flush();
    expect(pb.done).toBe(true);
    // Blocking again after stop() is not reported.
    const c = q.enqueue("r", { who: "c" });
    void q.block(c, t.clock.now() + 1000, watched.signal);
    expect(seen).toHaveLength(1);
    expect(pa.done).toBe(false);
  });

  test("withdraw takes a blocked waiter out of line for good: its call is answered as aborted, it keeps no place", async () => {
    const a = q.enqueue("r", { who: "a" });
    const b = q.enqueue("r", { who: "b" });
    const pa = q.block(a, t.clock.now() + 1000, new AbortController().signal);
    await t.kernel.ctx.tx(() => q.withdraw(a));
    expect(await pa).toEqual({ kind: "aborted" });
    expect(whos("r")).toEqual(["b"]);
    expect(q.get(a.token)).toBeUndefined();
    expect(q.position(b)).toBe(1);
  });
});
