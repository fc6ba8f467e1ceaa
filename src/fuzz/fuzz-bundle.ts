import type { HookPoint } from "../protocol/index.js";
import { type CpuStats, cpuStats } from "./cpu-stats.js";
import { fuzzPoint, type OutcomeCounts } from "./fuzz-point.js";
import type { FuzzFailure, FuzzTarget, SeedEvent } from "./fuzz-target.js";
import { type HuntResult, huntTimeouts } from "./hunt-timeouts.js";

export interface FuzzBundleOptions {
  /** The exported points to fuzz (the manifest's, or a `--points` subset). */
  readonly points: readonly HookPoint[];
  readonly dictionary: readonly string[];
  /** Known events (fixtures; decision-log events later) to mutate and to grow. */
  readonly seeds: readonly SeedEvent[];
  /** Generated events per point at most. */
  readonly runs: number;
  /** The whole budget, all points and both phases; each point gets an equal share, split between the random fuzz and the hunt. */
  readonly timeMs: number;
  readonly seed: number;
  /** Timeout hunting (default true). */
  readonly grow?: boolean;
  readonly signal?: AbortSignal;
}

/** What the fuzz found on one point. */
export interface PointReport {
  readonly point: HookPoint;
  readonly runs: number;
  readonly durationMs: number;
  readonly decided: OutcomeCounts;
  readonly failed: OutcomeCounts;
  /** Generated events not sent: no tool matcher of the handler selects their tool (production skips them too). */
  readonly skipped: number;
  /** CPU of the generated calls; `p99OfTimeout` is the headroom. */
  readonly cpu: CpuStats | null;
  readonly failures: readonly FuzzFailure[];
  /** The timeout hunt; null with `grow: false`. */
  readonly growth: HuntResult | null;
}

/** The fuzz of one bundle. `clean` is false when any point failed or was flagged. */
export interface FuzzReport {
  readonly type: "fuzz";
  readonly hash: string;
  readonly tenantId: string;
  readonly version: number | null;
  readonly timeoutMs: number;
  readonly seed: number;
  readonly clean: boolean;
  readonly points: readonly PointReport[];
  readonly durationMs: number;
}

/** Share of a point's time given to the random fuzz when the hunt runs too (the hunt gets the rest). */
const FUZZ_SHARE = 0.4;

/**
 * Fuzzes every given point of one bundle: generated and mutated events (`fuzzPoint`), then, with `grow`,
 * timeout hunting on the fixture events and on one event per decision the fuzz reached (`huntTimeouts`).
 * Bounded by `runs` per point and `timeMs` overall; replayed by `seed`.
 *
 * @example
 * const report = await fuzzBundle(target, { points: ["tool.call"], dictionary, seeds, runs: 1000, timeMs: 30_000, seed: 42 });
 * if (!report.clean) process.exitCode = 1;
 */
export async function fuzzBundle(target: FuzzTarget, options: FuzzBundleOptions): Promise<FuzzReport> {
  const started = performance.now();
  const grow = options.grow !== false;
  const points: PointReport[] = [];
  for (const [i, point] of options.points.entries()) {
    const left = options.timeMs - (performance.now() - started);
    const share = left / (options.points.length - i);
    const seeds = options.seeds.filter((s) => s.point === point);
    const fuzzed = await fuzzPoint(target, {
      point,
      dictionary: options.dictionary,
      seeds,
      runs: options.runs,
      timeMs: Math.max(1, grow ? share * FUZZ_SHARE : share),
      seed: options.seed,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const growth = grow
      ? await huntTimeouts(target, {
          point,
          bases: [...seeds, ...fuzzed.branchEvents],
          timeMs: Math.max(1, share - fuzzed.durationMs),
          seed: options.seed,
          ...(options.signal ? { signal: options.signal } : {}),
        })
      : null;
    points.push({
      point,
      runs: fuzzed.runs,
      durationMs: fuzzed.durationMs + (growth?.durationMs ?? 0),
      decided: fuzzed.decided,
      failed: fuzzed.failed,
      skipped: fuzzed.skipped,
      cpu: cpuStats(fuzzed.cpuSamples, target.limits.timeoutMs),
      failures: [...fuzzed.failures, ...(growth?.failures ?? [])],
      growth,
    });
  }
  return {
    type: "fuzz",
    hash: target.bundle.hash,
    tenantId: target.tenantId,
    version: target.version ?? null,
    timeoutMs: target.limits.timeoutMs,
    seed: options.seed,
    clean: points.every((p) => p.failures.length === 0 && (p.growth?.flags.length ?? 0) === 0),
    points,
    durationMs: Math.round(performance.now() - started),
  };
}
