// How cheap can a call that commits be? The same client times, interleaved round by round on one
// daemon: a ping, a read-only tools/call (get_note of a missing key: no transaction), the
// simplest writing tools/call (increment_counter: one UPDATE and one journal record in one
// transaction), and an uncontended lock_resource + unlock_resource. Each as a ratio to its floor
// (a ping, plus under full one fsync per write, each fsync taken in the same round): what the
// lock goals can be compared with (bench/README.md, "What a committing call costs").
// Under normal it then runs the same calls hot, in this process, on a kernel of its own (no HTTP,
// no JSON-RPC: runTool straight on the kernel), and sets the lock pair's cost there against the
// whole budget the goal leaves over two pings: the least a lock pair can cost over HTTP.
//   bun bench/floors.ts [--modes normal,full] [--rounds 2000]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createKernel } from "../src/domain/kernel.ts";
import { runTool } from "../src/mcp/run-tool.ts";
import { openStore } from "../src/store/db.ts";
import { startDaemon } from "../test/helpers/daemon.ts";
import { fsyncer } from "./pairing.ts";
import { warmUp } from "./warm-up.ts";
import { median } from "./stats.ts";

const { values } = parseArgs({ options: { modes: { type: "string" }, rounds: { type: "string" } } });
const MODES = (values.modes ?? "normal,full").split(",").filter(Boolean);
const ROUNDS = Number(values.rounds ?? 2000);

for (const mode of MODES) {
  const d = await startDaemon({ args: ["--durability", mode] });
  try {
    await warmUp(d);
    const fsync = fsyncer(d.home, mode === "full");
    // Each figure with how many writes (fsyncs, under full) its floor counts.
    const figures: { name: string; writes: number; run: () => Promise<unknown> }[] = [
      { name: "ping", writes: 0, run: () => d.rpc("ping") },
      { name: "get_note (no transaction)", writes: 0, run: () => d.call("get_note", { key: "floors:none" }) },
      { name: "increment_counter (one write)", writes: 1, run: () => d.call("increment_counter", { name: "floors" }) },
      {
        name: "lock_resource + unlock_resource",
        writes: 2,
        run: async () => {
          const l = await d.call("lock_resource", { name: "floors", agent_id: "floors" });
          await d.call("unlock_resource", { name: "floors", lock_token: l.lock_token });
        },
      },
    ];
    const times = figures.map(() => [] as number[]);
    const syncs: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      syncs.push(fsync.once());
      for (const [k, f] of figures.entries()) {
        const t = performance.now();
        await f.run();
        times[k]!.push(performance.now() - t);
      }
    }
    fsync.close();
    const ping = median(times[0]!);
    const sync = median(syncs);
    console.log(`${mode}: ${ROUNDS} rounds; ping p50 ${ping.toFixed(3)} ms${mode === "full" ? `, fsync p50 ${sync.toFixed(3)} ms` : ""}`);
    for (const [k, f] of figures.entries()) {
      const calls = f.name.includes("+") ? 2 : 1;
      const floor = calls * ping + f.writes * sync;
      const t = median(times[k]!);
      console.log(`  ${f.name.padEnd(34)} p50 ${t.toFixed(3)} ms = ${(t / floor).toFixed(2)}× its floor (${calls} ping${calls > 1 ? "s" : ""}${f.writes && mode === "full" ? ` + ${f.writes} fsync` : ""})`);
    }
    if (mode === "normal") await inProcess(ping);
  } finally {
    await d.kill();
  }
}

/**
 * The calls hot in one process: what a lock pair costs with no transport at all (a daemon's own
 * SQLite settings, batchBusyTurns included), against the budget lock+unlock ≤ 1.25× two pings
 * leaves for everything a lock pair does beyond two pings: 0.25 × 2 × the HTTP ping.
 */
async function inProcess(pingMs: number): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "airlock-floors-"));
  const store = openStore(join(home, "airlock.db"), { durability: "normal", batchBusyTurns: true });
  const kernel = await createKernel({ store });
  const answer = async (name: string, args: Record<string, unknown>) => JSON.parse((await runTool(kernel, name, args)).content[0]!.text);
  const pairs: { name: string; run: () => Promise<unknown> }[] = [
    { name: "get_note × 2 (no transaction)", run: async () => (await answer("get_note", { key: "floors:none" }), answer("get_note", { key: "floors:none" })) },
    { name: "increment_counter × 2", run: async () => (await answer("increment_counter", { name: "floors" }), answer("increment_counter", { name: "floors" })) },
    {
      name: "lock_resource + unlock_resource",
      run: async () => {
        const l = await answer("lock_resource", { name: "floors", agent_id: "floors" });
        await answer("unlock_resource", { name: "floors", lock_token: l.lock_token });
      },
    },
  ];
  try {
    for (let i = 0; i < 2000; i++) for (const p of pairs) await p.run(); // the JIT's later tiers
    const times = pairs.map(() => [] as number[]);
    for (let i = 0; i < ROUNDS * 4; i++) {
      for (const [k, p] of pairs.entries()) {
        await new Promise((r) => setImmediate(r)); // each pair starts a turn of its own, as a request does
        const t = performance.now();
        await p.run();
        times[k]!.push(performance.now() - t);
      }
    }
    // The hand-off: a waiter blocked on the lock; from the unlock's start to the waiter's answer.
    const handOffs: number[] = [];
    let held = (await answer("lock_resource", { name: "floors:h", agent_id: "a" })).lock_token as string;
    for (let i = 0; i < ROUNDS * 2; i++) {
      const waiter = answer("lock_resource", { name: "floors:h", agent_id: "b", wait_seconds: 10 });
      await new Promise((r) => setImmediate(r));
      const t = performance.now();
      const release = answer("unlock_resource", { name: "floors:h", lock_token: held });
      const got = await waiter;
      if (i > 200) handOffs.push(performance.now() - t);
      await release;
      held = got.lock_token;
    }
    const budget = 0.25 * 2 * pingMs;
    console.log(`  hot, in one process (no HTTP, no JSON-RPC), ${ROUNDS * 4} rounds; the goal's budget over two pings: 0.25 × 2 × ${pingMs.toFixed(3)} = ${(budget * 1000).toFixed(0)} µs`);
    for (const [k, p] of pairs.entries()) {
      const t = median(times[k]!);
      console.log(`    ${p.name.padEnd(32)} p50 ${(t * 1000).toFixed(1)} µs = ${(t / budget).toFixed(2)}× that budget`);
    }
    const h = median(handOffs);
    console.log(`    ${"hand-off (unlock → waiter's answer)".padEnd(32)} p50 ${(h * 1000).toFixed(1)} µs = ${(h / (0.5 * pingMs)).toFixed(2)}× the hand-off goal's budget over one ping (0.5 × ping)`);
  } finally {
    kernel.close();
    await store.close();
    rmSync(home, { recursive: true, force: true });
  }
}
