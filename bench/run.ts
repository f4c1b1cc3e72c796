// The benchmark suite (`npm run bench`). Every figure is reported against a baseline measured
// in the same run on the same daemon (a JSON-RPC ping), so a noisy machine cancels out; the
// absolute numbers are printed too. Writes bench/results.json and bench/results.svg.
//   bun bench/run.ts [--quick] [--modes normal,full]
import { openSync, readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir, cpus, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type DaemonProcess, startDaemon } from "../test/helpers/daemon.ts";
import { flock, LOCK_EX, LOCK_UN, monotonicNs } from "./flock.ts";
import { renderChart } from "./chart.ts";

const { values } = parseArgs({ options: { quick: { type: "boolean" }, modes: { type: "string" } } });
const QUICK = values.quick === true;
const MODES = (values.modes ?? "normal,full").split(",").filter(Boolean);
const SECONDS = QUICK ? 0.5 : 2; // per throughput point
const CONCURRENCY = [1, 16, 64];

type Row = { metric: string; value: number; unit: string; baseline?: string; baselineValue?: number; ratio?: number; mode?: string };
const rows: Row[] = [];
const add = (r: Row) => {
  if (r.baselineValue !== undefined) r.ratio = r.value / r.baselineValue;
  rows.push(r);
};

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const median = (xs: number[]) => pct(xs, 50);

async function timeEach(n: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  return out;
}

/** Operations per second with `clients` concurrent keep-alive loops for `seconds`. */
async function throughput(clients: number, seconds: number, op: (client: number, i: number) => Promise<unknown>): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let count = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; performance.now() < end; i++) {
        await op(c, i);
        count++;
      }
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

async function latencies(d: DaemonProcess, mode: string) {
  for (let i = 0; i < 200; i++) await d.rpc("ping");
  const ping = median(await timeEach(QUICK ? 200 : 1000, () => d.rpc("ping")));
  add({ mode, metric: "ping round trip (p50)", value: ping, unit: "ms" });

  const lockUnlock = median(
    await timeEach(QUICK ? 200 : 1000, async () => {
      const l = await d.call("lock_resource", { name: "bench:uncontended", agent_id: "b" });
      await d.call("unlock_resource", { name: "bench:uncontended", lock_token: l.lock_token });
    }),
  );
  add({ mode, metric: "lock+unlock, uncontended (p50)", value: lockUnlock, unit: "ms", baseline: "2 pings", baselineValue: 2 * ping });

  const lags: number[] = [];
  let holder = await d.call("lock_resource", { name: "bench:handoff", agent_id: "h0" });
  for (let i = 0; i < (QUICK ? 30 : 100); i++) {
    const waiter = d.call("lock_resource", { name: "bench:handoff", agent_id: `h${i + 1}`, wait_seconds: 50 });
    while (!(await d.call("list_locks")).find((l: any) => l.name === "bench:handoff")?.waiters?.[0]?.blocked) await Bun.sleep(1);
    const t0 = performance.now();
    void d.call("unlock_resource", { name: "bench:handoff", lock_token: holder.lock_token });
    holder = await waiter;
    lags.push(performance.now() - t0);
  }
  add({ mode, metric: "hand-off, release → waiter answered (p50)", value: median(lags), unit: "ms", baseline: "1 ping", baselineValue: ping });
  add({ mode, metric: "hand-off, release → waiter answered (p99)", value: pct(lags, 99), unit: "ms", baseline: "1 ping", baselineValue: ping });
  return ping;
}

/** How late a blocked waiter gets the lock after its holder's TTL or heartbeat deadline. */
async function expiryLags(d: DaemonProcess, mode: string, ping: number) {
  const reps = QUICK ? 2 : 5;
  for (const kind of ["TTL", "presence"] as const) {
    const lags: number[] = [];
    for (let i = 0; i < reps; i++) {
      const name = `bench:expiry:${kind}:${i}`;
      const agent = `exp-${kind}-${i}`;
      const t0 = performance.now();
      if (kind === "presence") await d.call("register_agent", { agent_id: agent, ttl_seconds: 1 });
      const held = await d.call("lock_resource", { name, agent_id: agent, ttl_seconds: kind === "TTL" ? 1 : 900 });
      const deadline = (t0 + performance.now()) / 2 + 1000; // the grant happened between these two
      if (!held.locked) throw new Error("expected the lock");
      const got = await d.call("lock_resource", { name, agent_id: "waiter", wait_seconds: 5 });
      if (!got.locked) throw new Error(`waiter not handed the lock after ${kind} expiry`);
      lags.push(performance.now() - deadline);
    }
    add({ mode, metric: `lag after ${kind} expiry (median of ${reps})`, value: median(lags), unit: "ms", baseline: "1 ping", baselineValue: ping });
  }
}

async function throughputs(d: DaemonProcess, mode: string) {
  const out: Record<string, Record<number, number>> = {};
  for (const c of CONCURRENCY) {
    const ping = await throughput(c, SECONDS, () => d.rpc("ping"));
    add({ mode, metric: `ping rate, ${c} clients`, value: ping, unit: "ops/s" });
    const inc = await throughput(c, SECONDS, () => d.call("increment_counter", { name: "bench:counter" }));
    add({ mode, metric: `increment_counter, ${c} clients`, value: inc, unit: "ops/s", baseline: `ping rate, ${c} clients`, baselineValue: ping });
    const note = await throughput(c, SECONDS, (cl, i) => d.call("set_note", { key: `bench:note:${cl}:${i % 50}`, value: "x".repeat(64) }));
    add({ mode, metric: `set_note, ${c} clients`, value: note, unit: "ops/s", baseline: `ping rate, ${c} clients`, baselineValue: ping });
    out.increment_counter = { ...out.increment_counter, [c]: inc };
    out.set_note = { ...out.set_note, [c]: note };
  }
  return out;
}

async function memory(d: DaemonProcess, mode: string) {
  await Bun.sleep(200);
  const idle = rssMiB(d.proc.pid);
  const total = QUICK ? 20_000 : 100_000;
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = next++; i < total; i = next++) {
        const n = i % 10_000;
        if (i % 3 === 0) await d.call("set_note", { key: `mem:note:${n}`, value: "v" });
        else if (i % 3 === 1) await d.call("increment_counter", { name: `mem:counter:${n}` });
        else {
          const l = await d.call("lock_resource", { name: `mem:lock:${n}`, agent_id: "m" });
          if (l.locked) await d.call("unlock_resource", { name: `mem:lock:${n}`, lock_token: l.lock_token });
        }
      }
    }),
  );
  const after = rssMiB(d.proc.pid);
  add({ mode, metric: "RSS at idle", value: idle, unit: "MiB" });
  add({ mode, metric: `RSS after ${total} ops over 10000 names`, value: after, unit: "MiB", baseline: "RSS at idle", baselineValue: idle });
}

/** The kernel's floor: flock(2) acquire+release, and hand-off between two processes. */
async function flockFloor(ping: number) {
  const file = join(mkdtempSync(join(tmpdir(), "airlock-flock-")), "lock");
  writeFileSync(file, "");
  const fd = openSync(file, "r");
  const n = 100_000;
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    flock(fd, LOCK_EX);
    flock(fd, LOCK_UN);
  }
  add({ metric: "flock(2) acquire+release", value: (performance.now() - t) / n, unit: "ms", baseline: "1 ping", baselineValue: ping });

  const child = Bun.spawn([process.execPath, join(import.meta.dir, "flock-child.ts"), file], { stdin: "pipe", stdout: "pipe" });
  const reader = child.stdout.getReader();
  const dec = new TextDecoder();
  let buf = "";
  const line = async () => {
    while (!buf.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("flock child exited");
      buf += dec.decode(value);
    }
    const l = buf.slice(0, buf.indexOf("\n"));
    buf = buf.slice(buf.indexOf("\n") + 1);
    return l;
  };
  const lags: number[] = [];
  for (let i = 0; i < (QUICK ? 20 : 100); i++) {
    flock(fd, LOCK_EX);
    child.stdin.write("go\n");
    await child.stdin.flush();
    await line(); // "waiting": it is about to block
    await Bun.sleep(2);
    const t0 = monotonicNs();
    flock(fd, LOCK_UN);
    const t1 = BigInt(await line());
    lags.push(Number(t1 - t0) / 1e6);
  }
  child.kill();
  add({ metric: "flock(2) hand-off between processes (p50)", value: median(lags), unit: "ms", baseline: "1 ping", baselineValue: ping });
}

const started = performance.now();
const summary: Record<string, unknown> = {};
let firstPing = 0;
for (const mode of MODES) {
  const d = await startDaemon({ args: ["--durability", mode] });
  try {
    const ping = await latencies(d, mode);
    firstPing ||= ping;
    await expiryLags(d, mode, ping);
    summary[mode] = await throughputs(d, mode);
    await memory(d, mode);
  } finally {
    await d.kill();
  }
}
await flockFloor(firstPing);

if (summary.normal && summary.full) {
  const n = (summary.normal as any).increment_counter[64];
  const f = (summary.full as any).increment_counter[64];
  add({ metric: "FULL+group commit vs NORMAL, increment_counter at 64 clients", value: f, unit: "ops/s", baseline: "NORMAL, 64 clients", baselineValue: n });
}

const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(4));
const table = [
  "| mode | metric | value | baseline | ratio |",
  "| --- | --- | ---: | --- | ---: |",
  ...rows.map((r) => `| ${r.mode ?? ""} | ${r.metric} | ${fmt(r.value)} ${r.unit} | ${r.baseline ?? ""} | ${r.ratio === undefined ? "" : `${r.ratio.toFixed(2)}×`} |`),
].join("\n");
console.log(table);
console.log(`\n${cpus().length} CPUs, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, bun ${Bun.version}; ${((performance.now() - started) / 1000).toFixed(0)} s`);
writeFileSync(join(import.meta.dir, "results.json"), JSON.stringify({ date: new Date().toISOString(), bun: Bun.version, cpus: cpus().length, quick: QUICK, rows }, null, 2));
writeFileSync(join(import.meta.dir, "results.svg"), renderChart(rows.filter((r) => r.ratio !== undefined)));
