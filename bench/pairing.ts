// Comparing fairly on a small machine: time two daemons' calls alternately, and pin the
// bench and the daemons to separate CPUs where taskset(1) exists (two identical daemons floating
// on 2 cores read 0.78× to 1.04× of each other; pinned, 1.00× to 1.01×). Used by bench/run.ts
// (the journal's cost) and bench/ab.ts (two checkouts).
import { closeSync, fdatasyncSync, openSync, writeSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { median } from "./stats.ts";

/** Times two calls alternately, n times each, so both see the same machine load; their medians. */
export async function paired(n: number, a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[number, number]> {
  const ta: number[] = [];
  const tb: number[] = [];
  for (let i = 0; i < n; i++) {
    let t = performance.now();
    await a();
    ta.push(performance.now() - t);
    t = performance.now();
    await b();
    tb.push(performance.now() - t);
  }
  return [median(ta), median(tb)];
}

/** Pins every thread of pid to one CPU; false when taskset is missing or refuses. */
export function pinTo(pid: number, cpu: number | string): boolean {
  if (!Bun.which("taskset")) return false;
  return Bun.spawnSync(["taskset", "-a", "-cp", String(cpu), String(pid)], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
}

/** Pins this process to the first CPU; returns how to undo it, or null when it cannot pin. */
export function pinSelf(): (() => void) | null {
  if (cpus().length < 2 || !Bun.which("taskset")) return null;
  const was = /:\s*(\S+)\s*$/.exec(Bun.spawnSync(["taskset", "-cp", String(process.pid)]).stdout.toString())?.[1];
  if (!was || !pinTo(process.pid, 0)) return null;
  return () => void pinTo(process.pid, was);
}

/** Of pairs [value, baseline], the one whose ratio is the median. */
export const medianPair = (pairs: [number, number][]) => [...pairs].sort((a, b) => a[0] / a[1] - b[0] / b[1])[pairs.length >> 1]!;

/**
 * Times one 4 KiB write + fdatasync(2) at a time, in dir (the daemon's folder, so the same file
 * system): the fsync half of a write's floor under full, taken beside each timed call so that
 * both see the same moment of a disk others use too. Off, once() is 0.
 */
export function fsyncer(dir: string, on: boolean) {
  const fd = on ? openSync(join(dir, "bench-fsync"), "w") : -1;
  const page = Buffer.alloc(4096, 1);
  return {
    once(): number {
      if (!on) return 0;
      const t = performance.now();
      writeSync(fd, page, 0, page.length, 0);
      fdatasyncSync(fd);
      return performance.now() - t;
    },
    close: () => on && closeSync(fd),
  };
}
