// The one percentile every benchmark prints: nearest rank on the sorted values (the smallest value
// with at least q of the samples at or below it); NaN without samples.
export function percentile(values: readonly number[], q: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * q) - 1))]!;
}
