// How cheap can a call that commits be? The same client times, interleaved round by round on one
// daemon: a ping, a read-only tools/call (get_note of a missing key: no transaction), the
// simplest writing tools/call (increment_counter: one UPDATE and one journal record in one
// transaction), and an uncontended lock_resource + unlock_resource. Each as a ratio to its floor
// (a ping, plus under full one fsync per write, each fsync taken in the same round): what the
// lock goals can be compared with (bench/README.md, "What a committing call costs").
//   bun bench/floors.ts [--modes normal,full] [--rounds 2000]
import { parseArgs } from "node:util";
import { startDaemon } from "../test/helpers/daemon.ts";
import { fsyncer } from "./pairing.ts";
import { warmUp } from "./warm-up.ts";

const { values } = parseArgs({ options: { modes: { type: "string" }, rounds: { type: "string" } } });
const MODES = (values.modes ?? "normal,full").split(",").filter(Boolean);
const ROUNDS = Number(values.rounds ?? 2000);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

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
  } finally {
    await d.kill();
  }
}
