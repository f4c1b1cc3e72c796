// Two checkouts of Airlock, A and B, compared call for call: a daemon from each (run from
// source), pinned to the last CPU with the bench on the first, the same calls (and lock
// hand-offs: unlock sent → the blocked waiter's answer) timed alternately; the median of three
// fresh pairs. Prints B's time as a ratio of A's.
//   bun bench/ab.ts DIR_A DIR_B [--modes normal,full] [--n 1500] [--pairs 3] [--only lock+unlock,hand-off]
// (--only: just those figures, by name; "hand-off" is the lock hand-off. More pairs and fewer
// figures bisect a change to one path in a few minutes on a loaded machine.)
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type DaemonProcess, startDaemon } from "../test/helpers/daemon.ts";
import { medianPair, paired, pinSelf, pinTo } from "./pairing.ts";
import { median } from "./stats.ts";
import { warmUp } from "./warm-up.ts";

const { values, positionals } = parseArgs({ allowPositionals: true, options: { modes: { type: "string" }, n: { type: "string" }, pairs: { type: "string" }, only: { type: "string" } } });
if (positionals.length !== 2) throw new Error("usage: bun bench/ab.ts DIR_A DIR_B [--modes normal,full] [--n 1500] [--pairs 3] [--only NAME,...]");
const [dirA, dirB] = positionals.map((p) => resolve(p)) as [string, string];
const MODES = (values.modes ?? "normal,full").split(",").filter(Boolean);
const N = Number(values.n ?? 1500);
const PAIRS = Number(values.pairs ?? 3);
const ONLY = values.only?.split(",").filter(Boolean);
const wanted = (name: string) => !ONLY || ONLY.includes(name);

/** A launcher that runs a checkout's source as if it were the binary (startDaemon runs AIRLOCK_BIN). */
function launcher(dir: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "airlock-ab-")), "airlock");
  writeFileSync(path, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(dir, "src/main.ts"))} "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

async function daemonFrom(bin: string, mode: string): Promise<DaemonProcess> {
  const was = process.env.AIRLOCK_BIN;
  process.env.AIRLOCK_BIN = bin;
  try {
    return await startDaemon({ args: ["--durability", mode] });
  } finally {
    if (was === undefined) delete process.env.AIRLOCK_BIN;
    else process.env.AIRLOCK_BIN = was;
  }
}

const calls: Record<string, (d: DaemonProcess) => () => Promise<unknown>> = {
  increment_counter: (d) => () => d.call("increment_counter", { name: "ab" }),
  "lock+unlock": (d) => async () => {
    const l = await d.call("lock_resource", { name: "ab", agent_id: "ab" });
    await d.call("unlock_resource", { name: "ab", lock_token: l.lock_token });
  },
  "acquire_slot+release_slot": (d) => async () => {
    const s = await d.call("acquire_slot", { agent_id: "ab", pool: "heavy" });
    await d.call("release_slot", { slot_token: s.slot_token });
  },
  "claim_paths+release_paths": (d) => async () => {
    const c = await d.call("claim_paths", { agent_id: "ab", paths: ["src/**"] });
    await d.call("release_paths", { claim_token: c.claim_token });
  },
};

/** One hand-off on d: a waiter blocks on the lock, the holder releases; from the unlock sent to the waiter's answer. */
function handOffs(d: DaemonProcess) {
  let holder: Promise<{ lock_token: string }> = d.call("lock_resource", { name: "ab-hand-off", agent_id: "h0" });
  let round = 0;
  return async () => {
    const token = (await holder).lock_token;
    const waiter = d.call("lock_resource", { name: "ab-hand-off", agent_id: `h${++round}`, wait_seconds: 50 });
    for (;;) {
      const locks = await d.call("list_locks");
      if (locks.find((l: { name: string }) => l.name === "ab-hand-off")?.waiters?.[0]?.blocked) break;
      await Bun.sleep(1);
    }
    const t0 = performance.now();
    void d.call("unlock_resource", { name: "ab-hand-off", lock_token: token });
    holder = waiter;
    await waiter;
    return performance.now() - t0;
  };
}

/** Hand-offs on a and b alternately; the median latency of each. */
async function pairedHandOffs(n: number, a: DaemonProcess, b: DaemonProcess): Promise<[number, number]> {
  const ha = handOffs(a);
  const hb = handOffs(b);
  const ta: number[] = [];
  const tb: number[] = [];
  for (let i = 0; i < n; i++) {
    ta.push(await ha());
    tb.push(await hb());
  }
  return [median(ta), median(tb)];
}

const binA = launcher(dirA);
const binB = launcher(dirB);
const unpin = pinSelf();
try {
  for (const mode of MODES) {
    const results: Record<string, [number, number][]> = {};
    for (let p = 0; p < PAIRS; p++) {
      const a = await daemonFrom(binA, mode);
      const b = await daemonFrom(binB, mode);
      try {
        if (unpin) for (const d of [a, b]) pinTo(d.proc.pid, cpus().length - 1);
        await warmUp(a);
        await warmUp(b);
        for (const [name, make] of Object.entries(calls)) if (wanted(name)) (results[name] ??= []).push((await paired(N, make(b), make(a))) as [number, number]);
        if (wanted("hand-off")) (results["lock hand-off"] ??= []).push(await pairedHandOffs(Math.max(50, N / 5), b, a));
      } finally {
        await a.kill();
        await b.kill();
      }
    }
    for (const [name, pairs] of Object.entries(results)) {
      const [tb, ta] = medianPair(pairs);
      const spread = pairs.map(([x, y]) => `${(x / y).toFixed(2)}×`).join(" ");
      console.log(`${mode.padEnd(6)} ${name.padEnd(26)} A ${ta.toFixed(4)} ms, B ${tb.toFixed(4)} ms: B/A ${(tb / ta).toFixed(2)}× (pairs ${spread})${unpin ? "" : " (unpinned)"}`);
    }
  }
} finally {
  unpin?.();
}
