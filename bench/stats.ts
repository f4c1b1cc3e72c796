// What the benches measure with: order statistics of a sample (the p-th percentile, 0–100,
// nearest rank from below; NaN for an empty sample), and CPU time read from /proc.
import { existsSync, readdirSync, readFileSync } from "node:fs";

export const pct = (xs: readonly number[], p: number): number =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]! : Number.NaN;

/** The middle of a sample (its upper middle when even); NaN for an empty one. */
export const median = (xs: readonly number[]): number => pct(xs, 50);

/** How long a clock tick of /proc's counts is, ms (getconf CLK_TCK, asked when first needed; 100 a second without it). */
let tickMs: number | undefined;

/** The CPU time a /proc stat file counts (a process's or a thread's), ms. */
export function statCpuMs(path: string): number {
  tickMs ??= 1000 / (Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100);
  // Fields 14 and 15 (utime, stime), counted after the command name's closing parenthesis.
  const stat = readFileSync(path, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * tickMs;
}

/**
 * How often a process's threads were switched out so far, all threads summed: `voluntary` (it
 * waited: a read, a timer, a lock) and `involuntary` (the scheduler took the core away while it
 * could run, because more was runnable than there were cores). Zeros once it is gone, or without /proc.
 */
export function processSwitches(pid: number): { voluntary: number; involuntary: number } {
  const out = { voluntary: 0, involuntary: 0 };
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const s = readFileSync(`/proc/${pid}/task/${t}/status`, "utf8");
      out.voluntary += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(s)?.[1] ?? 0);
      out.involuntary += Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(s)?.[1] ?? 0);
    }
  } catch {
    // gone meanwhile (a thread, or the process), or no /proc
  }
  return out;
}

/**
 * A process's CPU time so far by thread name (`/proc/PID/task/TID/comm`: Bun's JavaScript thread
 * is named after the binary, its JIT compilers "JITWorker", the collector's helpers "HeapHelper"),
 * ms; threads of one name summed. Empty once it is gone, or without /proc.
 */
export function threadCpuMs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      try {
        const name = readFileSync(`/proc/${pid}/task/${t}/comm`, "utf8").trim();
        out.set(name, (out.get(name) ?? 0) + statCpuMs(`/proc/${pid}/task/${t}/stat`));
      } catch {
        // a thread gone meanwhile
      }
    }
  } catch {
    // the process gone, or no /proc
  }
  return out;
}

/** A process's CPU time so far (every thread), ms; 0 once it is gone, or without /proc. */
export function processCpuMs(pid: number): number {
  try {
    return statCpuMs(`/proc/${pid}/stat`);
  } catch {
    return 0;
  }
}

/**
 * The CPU time of every `postgres` process on the machine, by pid (the bench's server is the only
 * one in CI and in a dev run; with another running beside it, this counts both).
 */
export function postgresCpuMs(): Map<number, number> {
  const out = new Map<number, number>();
  if (!existsSync("/proc")) return out;
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/comm`, "utf8").trim() === "postgres") out.set(Number(e), processCpuMs(Number(e)));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
