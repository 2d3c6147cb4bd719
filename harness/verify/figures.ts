// How verify shows its measured figures: seconds to a tenth (as its advice quotes them) and a p99.
export const round1 = (s: number) => Math.round(s * 10) / 10;
export const fmt = (s: number) => `${round1(s).toFixed(1)}s`;
export const p99 = (values: number[]) => {
  const v = [...values].sort((a, b) => a - b);
  return v.length ? v[Math.min(v.length - 1, Math.ceil(0.99 * v.length) - 1)]! : 0;
};
