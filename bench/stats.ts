// Order statistics the benches report: the p-th percentile (0–100) of a sample, nearest rank
// from below; NaN for an empty sample.
export const pct = (xs: readonly number[], p: number): number =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]! : Number.NaN;
