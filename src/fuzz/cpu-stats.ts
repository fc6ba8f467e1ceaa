/** CPU time of a point's calls: nearest-rank percentiles of the isolate's own `cpuTime`, in ms. */
export interface CpuStats {
  readonly calls: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** p99 as a share of the call timeout (0.38 = "p99 at 38 % of 50 ms"). */
  readonly p99OfTimeout: number;
}

/** Percentiles of `samples` (CPU ms per call) against `timeoutMs`; null when there is no sample. */
export function cpuStats(samples: readonly number[], timeoutMs: number): CpuStats | null {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? 0;
  const p99Ms = round(rank(0.99));
  return {
    calls: sorted.length,
    p50Ms: round(rank(0.5)),
    p99Ms,
    maxMs: round(sorted[sorted.length - 1] ?? 0),
    p99OfTimeout: Math.round((p99Ms / timeoutMs) * 1000) / 1000,
  };
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
