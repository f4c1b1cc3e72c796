import { describe, expect, test } from "bun:test";
import { useKernel } from "../helpers/kernel.ts";
import { flush, track } from "./support.ts";

const WAIT = 25_000;

const t = useKernel();

const ev = () => t.kernel.events;

describe("Events", () => {
  test("signal counts generations from 1, per event name", async () => {
    expect([await ev().signal("build"), await ev().signal("build"), await ev().signal("build")]).toEqual([1, 2, 3]);
    expect(await ev().signal("deploy")).toBe(1);
    expect(await ev().generation("build")).toBe(3);
    expect(await ev().generation("never")).toBe(0);
  });

  test("wait fires at once when the generation is already past last_seen", async () => {
    await ev().signal("e");
    await ev().signal("e");
    expect(await ev().wait("e", 0, WAIT)).toEqual({ generation: 2, fired: true });
    expect(await ev().wait("e", 1, WAIT)).toEqual({ generation: 2, fired: true });
    expect(ev().waits.size).toBe(0);
  });

  test("wait without wait time answers at once whether or not it fired", async () => {
    await ev().signal("e");
    expect(await ev().wait("e", 1, 0)).toEqual({ generation: 1, fired: false });
    expect(await ev().wait("never", 0, 0)).toEqual({ generation: 0, fired: false });
  });

  test("a blocked wait is woken by the next signal", async () => {
    await ev().signal("e");
    const w = track(ev().wait("e", 1, WAIT));
    t.clock.advance(5_000);
    await flush();
    expect(w.done).toBe(false);
    const gen = await ev().signal("e");
    await flush();
    expect(w.value).toEqual({ generation: gen, fired: true });
    expect(gen).toBe(2);
  });

  test("a signal wakes every waiter on the event, and only that event", async () => {
    const waiters = [track(ev().wait("e", 0, WAIT)), track(ev().wait("e", 0, WAIT)), track(ev().wait("e", 0, WAIT))];
    const other = track(ev().wait("other", 0, WAIT));
    await ev().signal("e");
    await flush();
    expect(waiters.map((w) => w.value)).toEqual(Array(3).fill({ generation: 1, fired: true }));
    expect(other.done).toBe(false);
    t.clock.advance(WAIT);
    await flush();
    expect(other.value).toEqual({ generation: 0, fired: false });
  });

  test("a signal between two waits is never missed", async () => {
    const first = ev().wait("e", 0, WAIT);
    await ev().signal("e");
    const seen = (await first).generation;
    // The waiter is busy: two signals land before it waits again.
    await ev().signal("e");
    await ev().signal("e");
    expect(await ev().wait("e", seen, WAIT)).toEqual({ generation: 3, fired: true });
  });

  test("a waiter that has seen a later generation keeps waiting through an earlier one", async () => {
    // After a clear, a waiter still holding generation 2 is not fired by the new generation 1.
    await ev().signal("e");
    await ev().signal("e");
    await ev().clear("e");
    const w = track(ev().wait("e", 2, WAIT));
    expect(await ev().signal("e")).toBe(1);
    await flush();
    expect(w.done).toBe(false);
    await ev().signal("e");
    await ev().signal("e");
    await flush();
    expect(w.value).toEqual({ generation: 3, fired: true });
  });

  test("clear resets the generation to 0 and wakes waiters without firing", async () => {
    await ev().signal("e");
    await ev().signal("e");
    const w = track(ev().wait("e", 2, WAIT));
    await flush();
    await ev().clear("e");
    await flush();
    expect(w.value).toEqual({ generation: 0, fired: false });
    expect(await ev().generation("e")).toBe(0);
    expect(await ev().signal("e")).toBe(1);
  });

  test("a wait that times out answers not fired with the current generation, at its deadline", async () => {
    await ev().signal("e");
    await ev().signal("e");
    const w = track(ev().wait("e", 2, 10_000));
    t.clock.advance(9_999);
    await flush();
    expect(w.done).toBe(false);
    t.clock.advance(1);
    await flush();
    expect(w.value).toEqual({ generation: 2, fired: false });
    expect(ev().waits.size).toBe(0);
  });

  test("a waiter that disconnects leaves the line and answers not fired", async () => {
    const ac = new AbortController();
    const w = track(ev().wait("e", 0, WAIT, ac.signal));
    await flush();
    expect(await ev().list()).toEqual([]);
    ac.abort();
    await flush();
    expect(w.value).toEqual({ generation: 0, fired: false });
    expect(ev().waits.size).toBe(0);
  });

  test("list shows each event's generation and how many wait on it", async () => {
    await ev().signal("b");
    await ev().signal("a");
    await ev().signal("a");
    const w = track(ev().wait("b", 1, WAIT));
    await flush();
    expect(await ev().list()).toEqual([
      { name: "a", generation: 2, waiters: 0 },
      { name: "b", generation: 1, waiters: 1 },
    ]);
    await ev().signal("b");
    await flush();
    expect(w.value).toEqual({ generation: 2, fired: true });
  });
});
