// The globs test/cluster/random.test.ts claims, and an oracle for their overlap written
// independently of src/domain/glob/: every pattern here is a region (a literal path, which
// covers everything below it, or `dir/**`, which covers dir itself too), so two overlap exactly
// when one region's segments begin the other's. Several overlap, so claims contend.
export const PATTERNS = ["src/**", "src/api/**", "src/api/users", "src/web/**", "src/web/app.ts", "docs/**", "lib"] as const;

const segments = (p: string) => p.replace(/\/\*\*$/, "").split("/");

/** Whether two of PATTERNS overlap. */
export function overlap(a: string, b: string): boolean {
  const [x, y] = [segments(a), segments(b)];
  const n = Math.min(x.length, y.length);
  return x.slice(0, n).every((s, i) => s === y[i]);
}

/** The first pair (one of as, one of bs) that overlaps, or null. */
export function overlappingPrefix(as: readonly string[], bs: readonly string[]): [string, string] | null {
  for (const a of as) for (const b of bs) if (overlap(a, b)) return [a, b];
  return null;
}
