// Start-to-healthy time: from spawning the daemon to its first 200 on /healthz, median of N
// fresh starts (each on a new database), for the compiled binary and for the source.
//   bun bench/startup.ts [N=10] [path/to/airlock]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { median } from "./stats.ts";

const n = Number(process.argv[2] ?? 10);
const bin = resolve(process.argv[3] ?? "release/out/linux-x64/airlock");
const root = resolve(import.meta.dir, "..");

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const p = s.port!;
  s.stop(true);
  return p;
}

async function once(cmd: string[]): Promise<number> {
  const home = mkdtempSync(join(tmpdir(), "airlock-start-"));
  const port = await freePort();
  const t0 = performance.now();
  const proc = Bun.spawn([...cmd, "daemon", "--port", String(port)], {
    env: { ...process.env, AIRLOCK_HOME: home, AIRLOCK_LOG: "warn" },
    stdout: "ignore",
    stderr: "ignore",
  });
  try {
    for (;;) {
      try {
        const r = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (r.ok) return performance.now() - t0;
      } catch {
        // not yet
      }
      if (performance.now() - t0 > 10_000) throw new Error("did not become healthy in 10 s");
      await Bun.sleep(2);
    }
  } finally {
    proc.kill(9);
    await proc.exited;
    rmSync(home, { recursive: true, force: true });
  }
}

for (const [label, cmd] of [
  ["compiled binary", [bin]],
  ["source (bun src/main.ts)", [process.execPath, join(root, "src/main.ts")]],
] as const) {
  const times: number[] = [];
  for (let i = 0; i < n; i++) times.push(await once([...cmd]));
  console.log(`${label.padEnd(26)} median ${median(times).toFixed(1)} ms over ${n} starts (min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)})`);
}
