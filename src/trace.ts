// Server-side timing marks for the benchmarks (bench/trace.ts reads them): with
// AIRLOCK_TRACE=FILE the daemon keeps (time, label) pairs in memory and writes them to FILE at
// exit, one "ms label" line each, the time on the wall clock with sub-µs resolution, so that a
// client process can lay its own send and receive times beside them. A bench/diagnostic switch,
// not a user setting. Off (the default), every mark site is one test of a constant that is false:
// callers write `if (TRACING) mark("...")`.
import { writeFileSync } from "node:fs";
import { env } from "./config/env.ts";

const FILE = env.traceFile;
export const TRACING: boolean = FILE !== undefined;

// Enough for a bench run (a mark is a number and a string); past it, marks are dropped.
const MAX_MARKS = 2_000_000;
const times: number[] = [];
const labels: string[] = [];

/** Notes that `label` happened now. Call only under `if (TRACING)`. */
export function mark(label: string): void {
  if (times.length >= MAX_MARKS) return;
  times.push(performance.now());
  labels.push(label);
}

if (FILE !== undefined) {
  process.on("exit", () => {
    const origin = performance.timeOrigin;
    writeFileSync(FILE, times.map((t, i) => `${(origin + t).toFixed(4)} ${labels[i]}\n`).join(""));
  });
}
