// Hand-off latency: from sending unlock_resource to the blocked waiter's answer, over real
// HTTP against a real daemon process, reported with a same-run ping round trip as baseline.
//   bun bench/handoff.ts [rounds=100] [durability=full]
import { startDaemon } from "../test/helpers/daemon.ts";
import { fsyncer } from "./pairing.ts";
import { warmUp } from "./warm-up.ts";
import { pct } from "./stats.ts";

const rounds = Number(process.argv[2] ?? 100);
const durability = process.argv[3] ?? "full";
const d = await startDaemon({ args: ["--durability", durability] });

try {
  await warmUp(d);
  const pings: number[] = [];
  const syncs: number[] = [];
  const fsync = fsyncer(d.home, durability === "full");

  const lags: number[] = [];
  let holder = await d.call("lock_resource", { name: "bench", agent_id: "a0" });
  for (let i = 0; i < rounds; i++) {
    const waiter = d.call("lock_resource", { name: "bench", agent_id: `a${i + 1}`, wait_seconds: 50 });
    // Release only once the waiter is blocked on the server.
    for (;;) {
      const locks = await d.call("list_locks");
      if (locks[0]?.waiters?.[0]?.blocked) break;
      await Bun.sleep(1);
    }
    // A ping in the same instant as each hand-off: the baseline sees the same machine load.
    const p = performance.now();
    await d.rpc("ping");
    pings.push(performance.now() - p);
    // And under full an fsync in the daemon's folder, the other half of a write's floor.
    syncs.push(fsync.once());
    const t0 = performance.now();
    const unlocked = d.call("unlock_resource", { name: "bench", lock_token: holder.lock_token });
    const got = await waiter;
    lags.push(performance.now() - t0);
    if (!(await unlocked).released || !got.locked) throw new Error(`round ${i}: hand-off failed`);
    holder = got;
  }
  const ms = (x: number) => `${x.toFixed(3)} ms`;
  const pingP50 = pct(pings, 50);
  console.log(`ping round trip      p50 ${ms(pingP50)}  p99 ${ms(pct(pings, 99))}`);
  console.log(`durability ${durability}`);
  console.log(`hand-off (${rounds} rounds) p50 ${ms(pct(lags, 50))}  p99 ${ms(pct(lags, 99))}  = ${(pct(lags, 50) / pingP50).toFixed(2)}× a ping`);
  // The floor of a call that writes: a round trip, plus one fsync when answers wait for it.
  fsync.close();
  const floor = pingP50 + pct(syncs, 50);
  console.log(`floor (ping${durability === "full" ? ` + fsync ${ms(pct(syncs, 50))}` : ""}, each taken with its hand-off) ${ms(floor)}  hand-off = ${(pct(lags, 50) / floor).toFixed(2)}× its floor`);
} finally {
  await d.kill();
}

