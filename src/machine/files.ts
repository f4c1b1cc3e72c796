// Tolerant reads under a root directory. Every machine fact is optional: a file that is absent,
// unreadable (PSI disabled answers EOPNOTSUPP) or garbled yields undefined, never an exception,
// and the root prefix lets a fixture directory stand in for a whole machine.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export function readText(root: string, path: string): string | undefined {
  try {
    return readFileSync(join(root, path), "utf8");
  } catch {
    return undefined;
  }
}

/** The file's first word as a finite number, or undefined. */
export function readNumber(root: string, path: string): number | undefined {
  const word = readText(root, path)?.trim().split(/\s+/)[0];
  const n = word ? Number(word) : Number.NaN;
  return Number.isFinite(n) ? n : undefined;
}
