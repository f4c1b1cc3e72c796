// Soak: a minute of mixed load on one daemon, with every way a waiter can end (granted, timed
// out, the client gone mid-wait) and every expiry (lock TTLs, task leases, note TTLs, lapsed
// heartbeats). Memory must stay flat once warm, waiter lines must never outgrow the callers
// that could be in them, and once the load stops and the TTLs pass nothing is left behind:
// no blocked waiter, no lock, no agent, no live note, no lost or twice-completed task.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type DaemonProcess, startDaemon } from "../helpers/daemon.ts";
import { until } from "../helpers/until.ts";
import { mib, MiB, type Prng, prng, rssBytes } from "./support.ts";

const SOAK_MS = Number(process.env.RELIABILITY_SOAK_MS ?? 60_000);
const WARMUP_MS = Math.min(10_000, SOAK_MS / 6); // JIT, SQLite page cache and heap growth settle first
const SAMPLE_EVERY_MS = 1000;
const SEED = Number(process.env.RELIABILITY_SEED ?? 7_340_033);
setDefaultTimeout(SOAK_MS + 60_000);

// Memory, read from the daemon after a full collection (airlock/memory) every few seconds: the
// floor of the last third of those readings (after warm-up) may not rise above the floor of the
// first third by more than a slack, for the live heap and for RSS. Read after a collection, not
// whenever: RSS saws up between the collector's own passes and drops 10 MiB or so at each, and
// on a loaded 2-core machine those passes come 30 s apart, so floors of plain RSS samples rose
// over the bound with no leak (12.6 MiB, from where the passes fell). A leak raises both floors:
// leaking each Request (about 2 KiB a call) grows RSS by about 0.7 MiB/s at this load, over
// 20 MiB between the two thirds. Smaller per-call leaks of waiters are caught by the
// waiter-count checks instead.
const HEAP_SLACK_FRACTION = 0.1;
const HEAP_SLACK_MIN = 4 * MiB;
const RSS_SLACK_FRACTION = 0.15;
const RSS_SLACK_MIN = 12 * MiB;
const COLLECT_EVERY_SAMPLES = 3;

const LOCKS = ["soak-lock-0", "soak-lock-1"];
const LOCK_CALLERS_PER_LOCK = 3; // one holder and two waiters per lock, each with one identity
const EVENT = "soak-event";
const EVENT_WAITERS = 3;
const QUEUE = "soak-q";
const CLAIMERS = 2;
const NOTE_KEYS = 300;
const AGENTS = 60;

let d: DaemonProcess;
beforeAll(async () => {
  d = await startDaemon();
  await d.call("configure_pool", { pool: "soak-pool", capacity: 1, expected_version: 0, author: "soak", reason: "ordered acquirers" });
});
afterAll(async () => {
  await d?.kill();
});

const ops: Record<string, number> = {}; // answered calls by tool, and calls the client gave up on
const tick = (what: string) => (ops[what] = (ops[what] ?? 0) + 1);
const outcomes: Record<string, number> = {}; // what the answers were, for the printout
const saw = (what: string) => (outcomes[what] = (outcomes[what] ?? 0) + 1);
const problems: string[] = [];

/** A tool call that may be cut off by the client after abortAfterMs; "aborted" when it was. */
async function call(tool: string, args: Record<string, unknown>, abortAfterMs?: number): Promise<any> {
  const ctl = new AbortController();
  const timer = abortAfterMs === undefined ? undefined : setTimeout(() => ctl.abort(), abortAfterMs);
  try {
    const r = await d.call(tool, args, { signal: ctl.signal });
    if (r?.isError) problems.push(`${tool} ${JSON.stringify(args)} → ${JSON.stringify(r)}`);
    // No caller here can close a cycle (each holds one lock, or takes resources in one global
    // order): any deadlock answer is a false positive.
    if (r?.deadlock) problems.push(`false deadlock: ${tool} ${JSON.stringify(args)} → ${JSON.stringify(r.deadlock)}`);
    tick(tool);
    return r;
  } catch (err) {
    if (ctl.signal.aborted) {
      tick(`${tool} (client gone)`);
      return "aborted";
    }
    problems.push(`${tool} failed: ${String(err)}`);
    return "failed";
  } finally {
    clearTimeout(timer);
  }
}

test(`a ${SOAK_MS / 1000} s soak of mixed load keeps memory flat and leaves no waiter, lock, agent or task behind (seed ${SEED})`, async () => {
  const stopAt = performance.now() + SOAK_MS;
  const running = () => performance.now() < stopAt;
  const pause = (r: Prng, lo: number, hi: number) => Bun.sleep(r.int(lo, hi));

  // Locks: every caller keeps its wake_token, so each identity holds at most one place per line.
  const lockCaller = async (name: string, agent: string, seed: number, holder: boolean) => {
    const r = prng(seed);
    let wake: string | undefined;
    while (running()) {
      const abortAfter = !holder && wake && r.chance(0.3) ? r.int(50, 400) : undefined;
      const res = await call("lock_resource", { name, agent_id: agent, ttl_seconds: 2, wait_seconds: holder ? 2 : 1, ...(wake ? { wake_token: wake } : {}) }, abortAfter);
      if (res === "aborted" || res === "failed") {
        await pause(r, 5, 50);
        continue;
      }
      if (res.locked) {
        saw("lock granted");
        wake = undefined;
        await pause(r, holder ? 600 : 20, holder ? 1500 : 100);
        await call("unlock_resource", { name, lock_token: res.lock_token });
      } else {
        saw("lock wait timed out");
        wake = res.wake_token;
      }
      await pause(r, 5, 50);
    }
  };

  // Events: a signaller and waiters that sometimes leave mid-wait.
  const signaller = async () => {
    const r = prng(SEED + 1);
    while (running()) {
      await call("signal_event", { name: EVENT });
      await pause(r, 100, 300);
    }
  };
  const eventWaiter = async (k: number) => {
    const r = prng(SEED + 10 + k);
    let seen = 0;
    while (running()) {
      const res = await call("wait_for_event", { name: EVENT, last_seen_generation: seen, wait_seconds: 1 }, r.chance(0.25) ? r.int(20, 300) : undefined);
      if (typeof res === "object") seen = res.generation;
      await pause(r, 0, 30);
    }
  };

  // Tasks: a producer, claimers blocked on an empty queue (sometimes abandoned), leases that
  // sometimes lapse, and fail_task requeues.
  const pushed = new Set<number>();
  const completed = new Map<number, number>();
  const producer = async () => {
    const r = prng(SEED + 2);
    let i = 0;
    while (running()) {
      const res = await call("push_task", { queue: QUEUE, payload: `job ${i++} ${"x".repeat(r.int(0, 500))}` });
      if (typeof res === "object") pushed.add(res.id);
      await pause(r, 50, 150);
    }
  };
  const claimer = async (k: number) => {
    const r = prng(SEED + 20 + k);
    while (running()) {
      const lapse = r.chance(0.05);
      const res = await call("claim_next_task", { queue: QUEUE, agent_id: `claimer-${k}`, lease_seconds: lapse ? 1 : 10, wait_seconds: 1 }, r.chance(0.2) ? r.int(20, 300) : undefined);
      if (typeof res === "object" && res.claimed) {
        if (lapse) saw("lease left to lapse");
        else if (r.chance(0.1)) await call("fail_task", { id: res.id, lease_token: res.lease_token, requeue: true });
        else {
          if (r.chance(0.1)) await call("renew_task", { id: res.id, lease_token: res.lease_token, lease_seconds: 10 });
          const done = await call("complete_task", { id: res.id, lease_token: res.lease_token });
          if (typeof done === "object" && done.completed) completed.set(res.id, (completed.get(res.id) ?? 0) + 1);
        }
      }
      await pause(r, 0, 30);
    }
  };

  // Notes with TTLs over a bounded key space.
  const noter = async () => {
    const r = prng(SEED + 3);
    while (running()) {
      const key = `soak-note-${r.int(0, NOTE_KEYS - 1)}`;
      const which = r.int(0, 3);
      if (which === 0) await call("set_note", { key, value: "v".repeat(r.int(1, 2000)), author: "noter", ttl_seconds: r.int(1, 3) });
      else if (which === 1) await call("get_note", { key });
      else if (which === 2) await call("set_note_if", { key, expected_value: "", new_value: "cas", ttl_seconds: 1 });
      else await call("delete_note", { key });
      await pause(r, 1, 10);
    }
  };

  // Ordered acquirers: each takes a random subset of (a path claim, lock A, lock B, a slot),
  // always in that global order, waiting for the next while holding the previous ones. Chains
  // of waits across three primitives, but never a cycle: the deadlock check must never answer.
  const ordered = async (k: number) => {
    const r = prng(SEED + 500 + k);
    const agent = `ordered-${k}`;
    const ttl = { ttl_seconds: 3 };
    const steps: { take: () => Promise<any>; ok: (a: any) => boolean; give: (a: any) => Promise<unknown> }[] = [
      {
        take: () => call("claim_paths", { agent_id: agent, room: "soak", paths: ["shared/**"], wait_seconds: 1, ...ttl }),
        ok: (a) => a?.granted === true,
        give: (a) => call("release_paths", { claim_token: a.claim_token }),
      },
      ...["ordered-a", "ordered-b"].map((name) => ({
        take: () => call("lock_resource", { name, agent_id: agent, wait_seconds: 1, ...ttl }),
        ok: (a: any) => a?.locked === true,
        give: (a: any) => call("unlock_resource", { name, lock_token: a.lock_token }),
      })),
      {
        take: () => call("acquire_slot", { agent_id: agent, pool: "soak-pool", wait_seconds: 1, ...ttl }),
        ok: (a) => a?.granted === true,
        give: (a) => call("release_slot", { slot_token: a.slot_token ?? a.wake_token }),
      },
    ];
    while (running()) {
      const held: { give: (a: any) => Promise<unknown>; answer: any }[] = [];
      let all = true;
      for (const step of steps) {
        if (!r.chance(0.6)) continue;
        const a = await step.take();
        if (!step.ok(a)) {
          if (a?.wake_token && step === steps[3]) await step.give(a); // a queued slot request is withdrawn
          all = false;
          break;
        }
        held.push({ give: step.give, answer: a });
      }
      saw(all ? "ordered: took its subset" : "ordered: gave up mid-way");
      await pause(r, 5, 40);
      for (const h of held.reverse()) await h.give(h.answer);
      await pause(r, 5, 30);
    }
  };

  // Agents with one-second heartbeats: some unregister, the rest lapse, each holding a lock
  // that its departure must release.
  const presence = async () => {
    const r = prng(SEED + 4);
    while (running()) {
      const agent = `soak-agent-${r.int(0, AGENTS - 1)}`;
      await call("register_agent", { agent_id: agent, ttl_seconds: 1 });
      await call("lock_resource", { name: `agent-lock-${agent}`, agent_id: agent, ttl_seconds: 600 });
      if (r.chance(0.5)) await call("unregister_agent", { agent_id: agent });
      if (r.chance(0.2)) await call("list_agents", {});
      await pause(r, 5, 30);
    }
  };

  // Sampling: memory, and the waiter lines, which may never hold more than their callers.
  const rss: { at: number; bytes: number }[] = [];
  const collected: { at: number; rss: number; heap: number }[] = [];
  let maxQueueDepth = 0;
  let maxEventWaiters = 0;
  let maxQueueWaiters = 0;
  const t0 = performance.now();
  const sampler = async () => {
    while (running()) {
      rss.push({ at: performance.now() - t0, bytes: rssBytes(d.proc.pid) });
      if (rss.length % COLLECT_EVERY_SAMPLES === 0) {
        const at = performance.now() - t0;
        const m = (await d.rpc("airlock/memory", {})).result;
        collected.push({ at, rss: m.rss_bytes, heap: m.heap_bytes });
      }
      const s = (await d.rpc("airlock/status", {})).result;
      for (const l of s.locks) {
        if (!LOCKS.includes(l.name)) continue;
        maxQueueDepth = Math.max(maxQueueDepth, l.queue_depth);
        if (l.queue_depth > LOCK_CALLERS_PER_LOCK) problems.push(`${l.name} has ${l.queue_depth} waiters: ${JSON.stringify(l.waiters)}`);
      }
      const ev = s.events.find((e: any) => e.name === EVENT)?.waiters ?? 0;
      const qw = s.queues.find((q: any) => q.queue === QUEUE)?.waiters ?? 0;
      maxEventWaiters = Math.max(maxEventWaiters, ev);
      maxQueueWaiters = Math.max(maxQueueWaiters, qw);
      // A client that left and called again may briefly count twice, until its disconnect is seen.
      if (ev > 2 * EVENT_WAITERS) problems.push(`${ev} event waiters`);
      if (qw > 2 * CLAIMERS) problems.push(`${qw} task claimers waiting`);
      await Bun.sleep(SAMPLE_EVERY_MS);
    }
  };

  await Promise.all([
    ...LOCKS.flatMap((name, i) => [
      lockCaller(name, `holder-${i}`, SEED + 100 + i, true),
      ...Array.from({ length: LOCK_CALLERS_PER_LOCK - 1 }, (_, k) => lockCaller(name, `waiter-${i}-${k}`, SEED + 200 + 10 * i + k, false)),
    ]),
    signaller(),
    ...Array.from({ length: EVENT_WAITERS }, (_, k) => eventWaiter(k)),
    producer(),
    ...Array.from({ length: CLAIMERS }, (_, k) => claimer(k)),
    noter(),
    presence(),
    ...Array.from({ length: 4 }, (_, k) => ordered(k)),
    sampler(),
  ]);
  const totalOps = Object.values(ops).reduce((a, b) => a + b, 0);

  // Load is over. The TTLs used above (locks 2 s, notes 3 s, heartbeats 1 s) run out within
  // 3 s of the last call; then no lock, agent, live note or attached waiter may be left.
  const leftovers = (x: any) => ({
    locks: x.locks.filter((l: any) => LOCKS.includes(l.name) || l.name.startsWith("agent-lock-")).map((l: any) => l.name),
    agents: x.agents.map((a: any) => a.agent_id),
    notes: x.notes,
    eventWaiters: x.events.find((e: any) => e.name === EVENT)?.waiters,
    claimersWaiting: x.queues.find((q: any) => q.queue === QUEUE)?.waiters,
  });
  const clean = { locks: [], agents: [], notes: 0, eventWaiters: 0, claimersWaiting: 0 };
  const loadEnd = performance.now();
  let s: any;
  await until(
    "the leftovers of the load to expire",
    async () => {
      s = (await d.rpc("airlock/status", {})).result;
      return Bun.deepEquals(leftovers(s), clean);
    },
    10_000,
    250,
  ).catch(() => undefined);
  const cleanAfterMs = performance.now() - loadEnd;
  const left = leftovers(s);
  if (!Bun.deepEquals(left, clean)) problems.push(`left behind after the load: ${JSON.stringify(left)}`);
  // Expiry timers fire at the deadline; 3 s of TTL plus room for a busy machine.
  if (cleanAfterMs > 6000) problems.push(`leftovers took ${cleanAfterMs.toFixed(0)} ms to expire`);
  // Detached lock waiters keep their place for the 120 s grace; they are visible behind a
  // holder. None is blocked, none is older than the grace, and no line is longer than its callers.
  const detached: number[] = [];
  for (const name of LOCKS) {
    const probe = await d.call("lock_resource", { name, agent_id: "probe", ttl_seconds: 30 });
    if (!probe.locked) {
      problems.push(`${name} still held after the load: ${JSON.stringify(probe)}`);
      continue;
    }
    const entry = (await d.call("list_locks")).find((l: any) => l.name === name);
    detached.push(entry.queue_depth);
    if (entry.queue_depth > LOCK_CALLERS_PER_LOCK) problems.push(`${name}: ${entry.queue_depth} waiters left`);
    const bad = entry.waiters.filter((w: any) => w.blocked || w.waiting_seconds > 120);
    if (bad.length > 0) problems.push(`${name}: waiters blocked or past their grace: ${JSON.stringify(bad)}`);
    expect(await d.call("unlock_resource", { name, lock_token: probe.lock_token })).toEqual({ released: true });
  }

  // Tasks: drain what is left (leases lapse within 10 s), then every acknowledged push is done
  // exactly once and nothing else is in the queue.
  const drainDeadline = performance.now() + 20_000;
  for (;;) {
    const c = await d.call("claim_next_task", { queue: QUEUE, agent_id: "drainer", lease_seconds: 30, wait_seconds: 1 });
    if (c.claimed) {
      const done = await d.call("complete_task", { id: c.id, lease_token: c.lease_token });
      if (done.completed) completed.set(c.id, (completed.get(c.id) ?? 0) + 1);
      else problems.push(`drainer could not complete task ${c.id}`);
      continue;
    }
    const open = (await d.call("list_tasks", { queue: QUEUE })).filter((t: any) => t.state !== "done");
    if (open.length === 0 || performance.now() > drainDeadline) break;
  }
  const tasks = (await d.call("list_tasks", { queue: QUEUE })) as { id: number; state: string }[];
  const notDone = tasks.filter((t) => t.state !== "done");
  if (notDone.length > 0) problems.push(`${notDone.length} tasks not drained: ${JSON.stringify(notDone.slice(0, 3))}`);
  const listedIds = new Set(tasks.map((t) => t.id));
  const lost = [...pushed].filter((id) => !listedIds.has(id));
  if (lost.length > 0) problems.push(`${lost.length} acknowledged tasks missing`);
  const twice = [...completed.entries()].filter(([, n]) => n > 1);
  if (twice.length > 0) problems.push(`${twice.length} tasks completed twice`);
  // Pushes are never abandoned by the client here, so the queue holds exactly the acknowledged ones.
  if (tasks.length !== pushed.size) problems.push(`${tasks.length} tasks listed, ${pushed.size} pushed`);

  // Memory.
  const settled = collected.filter((x) => x.at >= WARMUP_MS);
  const third = Math.max(1, Math.floor(settled.length / 3));
  const floors = (of: (x: (typeof settled)[number]) => number) => ({
    first: Math.min(...settled.slice(0, third).map(of)),
    last: Math.min(...settled.slice(-third).map(of)),
  });
  const heap = floors((x) => x.heap);
  const heapBound = heap.first + Math.max(HEAP_SLACK_MIN, heap.first * HEAP_SLACK_FRACTION);
  const settledRss = floors((x) => x.rss);
  const rssBound = settledRss.first + Math.max(RSS_SLACK_MIN, settledRss.first * RSS_SLACK_FRACTION);
  const peak = Math.max(...rss.map((x) => x.bytes));

  console.log(
    `soak (seed ${SEED}): ${(SOAK_MS / 1000).toFixed(0)} s, ${totalOps} ops ${JSON.stringify(ops)}, outcomes ${JSON.stringify(outcomes)}; ` +
      `RSS first ${mib(rss[0]!.bytes)}, max ${mib(peak)}, last ${mib(rss.at(-1)!.bytes)}; after warm-up and a collection: heap floors ${mib(heap.first)} → ${mib(heap.last)} (bound ${mib(heapBound)}), RSS floors ${mib(settledRss.first)} → ${mib(settledRss.last)} (bound ${mib(rssBound)}); ` +
      `max lock queue depth ${maxQueueDepth} (callers per lock ${LOCK_CALLERS_PER_LOCK}), max event waiters ${maxEventWaiters}, max blocked claimers ${maxQueueWaiters}; leftovers expired ${(cleanAfterMs / 1000).toFixed(1)} s after the load, detached lock waiters left ${JSON.stringify(detached)}; ` +
      `${pushed.size} tasks pushed, ${completed.size} completed; ${problems.length} problems; RSS samples MiB ${rss.map((x) => (x.bytes / MiB).toFixed(0)).join(",")}; heap after collections MiB ${collected.map((x) => (x.heap / MiB).toFixed(1)).join(",")}`,
  );
  expect(problems).toEqual([]);
  expect(settled.length).toBeGreaterThanOrEqual(6);
  expect(heap.last).toBeLessThanOrEqual(heapBound);
  expect(settledRss.last).toBeLessThanOrEqual(rssBound);
  expect(d.proc.exitCode).toBeNull();
});
