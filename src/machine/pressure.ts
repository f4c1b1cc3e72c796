// Pressure stall information (PSI): the share of time tasks waited for CPU, memory or I/O.
// Unlike load averages it measures contention directly, so it is the best single signal of
// whether a pool's capacity is too high. Kernels without PSI simply have no files.
import { readText } from "./files.ts";

export interface PsiAverages {
  /** Percent of wall time over the last 10, 60 and 300 seconds. */
  avg10: number;
  avg60: number;
  avg300: number;
}

export interface Pressure {
  /** Some task was stalled. */
  some: PsiAverages;
  /** Every non-idle task was stalled at once; absent for cpu on kernels before 5.13. */
  full?: PsiAverages;
}

export type PressureKind = "cpu" | "memory" | "io";

/** Parses "some avg10=0.65 avg60=0.59 avg300=0.65 total=3475517" lines, or undefined. */
export function parsePressure(text: string): Pressure | undefined {
  const lines: Partial<Record<string, PsiAverages>> = {};
  for (const line of text.split("\n")) {
    const [kind, ...pairs] = line.trim().split(/\s+/);
    const field = (name: string) => Number(pairs.find((p) => p.startsWith(`${name}=`))?.slice(name.length + 1));
    const avg = { avg10: field("avg10"), avg60: field("avg60"), avg300: field("avg300") };
    if (kind && Object.values(avg).every(Number.isFinite)) lines[kind] = avg;
  }
  if (!lines.some) return undefined;
  return lines.full ? { some: lines.some, full: lines.full } : { some: lines.some };
}

/** The first of `paths` (relative to root) that holds a readable PSI file. */
export function readPressure(root: string, paths: string[]): Pressure | undefined {
  for (const path of paths) {
    const text = readText(root, path);
    const p = text === undefined ? undefined : parsePressure(text);
    if (p) return p;
  }
  return undefined;
}
