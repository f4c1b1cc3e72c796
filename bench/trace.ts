// Where the time goes: a daemon started with AIRLOCK_TRACE (src/trace.ts) marks each step of a
// call (request read, transaction, COMMIT, fsync done, afterCommit hooks, answer handed to
// Bun); this bench lays its own send and receive times beside those marks, on the same wall
// clock, and prints the median offset of each step from the moment the unlock was sent (a lock
// hand-off) or the call was sent (lock+unlock), and what a batch of 64 clients' counter calls does.
//   bun bench/trace.ts [--modes full,normal] [--rounds 200] [--dir CHECKOUT]
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type DaemonProcess, startDaemon } from "../test/helpers/daemon.ts";
import { warmUp } from "./warm-up.ts";
import { median } from "./stats.ts";

const { values } = parseArgs({ options: { modes: { type: "string" }, rounds: { type: "string" }, dir: { type: "string" } } });
const MODES = (values.modes ?? "full,normal").split(",").filter(Boolean);
const ROUNDS = Number(values.rounds ?? 200);
const now = () => performance.timeOrigin + performance.now();

type Mark = { t: number; label: string };

/** A checkout other than this one runs from its own source (as bench/ab.ts does). */
function binFor(dir: string | undefined): string | undefined {
  if (!dir) return undefined;
  const path = join(mkdtempSync(join(tmpdir(), "airlock-trace-")), "airlock");
  writeFileSync(path, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(resolve(dir), "src/main.ts"))} "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

/** tools/call with an id of our own, so that the daemon's "respond <id>" mark names it. */
async function call(d: DaemonProcess, id: string, name: string, args: Record<string, unknown>): Promise<any> {
  const res = await d.post(JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }));
  return JSON.parse(JSON.parse(await res.text()).result.content[0].text);
}

/** Each window's marks as offsets from its start; the median of each label's first occurrence. */
function breakdown(marks: Mark[], windows: { t0: number; end: number; client: Record<string, number> }[], rename: (label: string, i: number) => string) {
  const offsets = new Map<string, number[]>();
  windows.forEach((w, i) => {
    // A label seen again in one window (the second call's "tx") is numbered: "tx (2)".
    const seen = new Map<string, number>();
    const here = marks.filter((m) => m.t >= w.t0 && m.t <= w.end).map((m) => ({ t: m.t, label: rename(m.label, i) }));
    for (const [label, t] of Object.entries(w.client)) here.push({ t, label });
    for (const m of here) {
      const n = (seen.get(m.label) ?? 0) + 1;
      seen.set(m.label, n);
      const label = n === 1 ? m.label : `${m.label} (${n})`;
      let xs = offsets.get(label);
      if (!xs) offsets.set(label, (xs = []));
      xs.push(m.t - w.t0);
    }
  });
  return [...offsets.entries()]
    .filter(([, xs]) => xs.length >= windows.length / 2)
    .map(([label, xs]) => ({ label, ms: median(xs) }))
    .sort((a, b) => a.ms - b.ms);
}

async function run(mode: string) {
  const trace = join(mkdtempSync(join(tmpdir(), "airlock-trace-")), "marks");
  const bin = binFor(values.dir);
  const was = process.env.AIRLOCK_BIN;
  if (bin) process.env.AIRLOCK_BIN = bin;
  const d = await startDaemon({ args: ["--durability", mode], env: { AIRLOCK_TRACE: trace } });
  if (bin) was === undefined ? delete process.env.AIRLOCK_BIN : (process.env.AIRLOCK_BIN = was);
  const handOffs: { t0: number; end: number; client: Record<string, number> }[] = [];
  const cycles: { t0: number; end: number; client: Record<string, number> }[] = [];
  const pings: { t0: number; end: number; client: Record<string, number> }[] = [];
  let burst = { t0: 0, end: 0, calls: 0 };
  try {
    await warmUp(d);
    // Pings: the floor's own steps.
    for (let i = 0; i < ROUNDS; i++) {
      const t0 = now();
      await (await d.post(JSON.stringify({ jsonrpc: "2.0", id: `p${i}`, method: "ping" }))).text();
      const t1 = now();
      pings.push({ t0, end: t1, client: { "client: answer read": t1 } });
    }
    // Lock hand-offs: the waiter is blocked on the server before the unlock is sent.
    let holder = await call(d, "h", "lock_resource", { name: "trace", agent_id: "a0" });
    for (let i = 0; i < ROUNDS; i++) {
      const waiter = call(d, `w${i}`, "lock_resource", { name: "trace", agent_id: `a${i + 1}`, wait_seconds: 50 });
      while (!(await d.call("list_locks"))[0]?.waiters?.[0]?.blocked) await Bun.sleep(1);
      // A ping just before, as bench/run.ts takes the hand-off's floor.
      await d.rpc("ping");
      const client: Record<string, number> = {};
      const t0 = now();
      const unlocked = call(d, `u${i}`, "unlock_resource", { name: "trace", lock_token: holder.lock_token }).then((r) => ((client["client: unlocker's answer read"] = now()), r));
      holder = await waiter;
      client["client: waiter's answer read"] = now();
      if (!(await unlocked).released || !holder.locked) throw new Error(`round ${i}: the hand-off failed`);
      handOffs.push({ t0, end: now(), client });
    }
    // Uncontended lock+unlock: two calls, one after the other.
    for (let i = 0; i < ROUNDS; i++) {
      const client: Record<string, number> = {};
      const t0 = now();
      const l = await call(d, `l${i}`, "lock_resource", { name: "trace:cycle", agent_id: "c" });
      client["client: lock's answer read"] = now();
      await call(d, `r${i}`, "unlock_resource", { name: "trace:cycle", lock_token: l.lock_token });
      client["client: unlock's answer read"] = now();
      cycles.push({ t0, end: now(), client });
    }
    // 64 clients calling increment_counter for a second.
    burst.t0 = now();
    const stop = burst.t0 + 1000;
    await Promise.all(
      Array.from({ length: 64 }, async (_, c) => {
        for (let i = 0; now() < stop; i++, burst.calls++) await call(d, `c${c}:${i}`, "increment_counter", { name: "trace" });
      }),
    );
    burst.end = now();
  } finally {
    await d.kill();
  }
  const marks: Mark[] = readFileSync(trace, "utf8")
    .trim()
    .split("\n")
    .map((l) => ({ t: Number(l.slice(0, l.indexOf(" "))), label: l.slice(l.indexOf(" ") + 1) }));

  const show = (title: string, rows: { label: string; ms: number }[]) => {
    console.log(`\n${mode}: ${title} (median offset from the first send, ms; ${ROUNDS} rounds)`);
    let last = 0;
    for (const r of rows) {
      console.log(`  ${r.ms.toFixed(3).padStart(7)}  +${(r.ms - last).toFixed(3)}  ${r.label}`);
      last = r.ms;
    }
  };
  show("ping", breakdown(marks, pings, (label, i) => (label === `respond p${i}` ? "respond" : label)));
  // The window's "ran lock_resource" is the waiter's (blocked since before the unlock was sent).
  const who = (label: string, names: Record<string, string>) => names[label] ?? label;
  show("lock hand-off", breakdown(marks, handOffs, (label, i) => who(label, { [`respond w${i}`]: "respond (waiter)", [`respond u${i}`]: "respond (unlocker)", "ran lock_resource": "ran (waiter)", "durable lock_resource": "durable (waiter)" })));
  show("lock+unlock", breakdown(marks, cycles, (label, i) => who(label, { [`respond l${i}`]: "respond (lock)", [`respond r${i}`]: "respond (unlock)" })));

  const inBurst = marks.filter((m) => m.t >= burst.t0 && m.t <= burst.end);
  const commits: number[] = [];
  let open: number | undefined;
  let txs = 0;
  let committed = 0;
  for (const m of inBurst) {
    if (m.label === "tx") txs++;
    else if (m.label === "commit") open = m.t;
    else if (m.label === "committed") {
      committed++;
      if (open !== undefined) commits.push(m.t - open);
      open = undefined;
    }
  }
  const seconds = (burst.end - burst.t0) / 1000;
  const inCommit = commits.reduce((a, b) => a + b, 0);
  console.log(
    `\n${mode}: increment_counter, 64 clients: ${(burst.calls / seconds).toFixed(0)} calls/s, ${committed} commits (${(txs / Math.max(1, committed)).toFixed(1)} transactions each)` +
      (commits.length ? `, a batch's COMMIT p50 ${median(commits).toFixed(3)} ms, ${((inCommit / (burst.end - burst.t0)) * 100).toFixed(0)}% of the time in COMMIT` : ""),
  );
}

for (const mode of MODES) await run(mode);
