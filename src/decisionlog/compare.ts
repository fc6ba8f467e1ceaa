import type { HookPoint, JsonValue } from "../protocol/index.js";
import type { ComparableOutcome } from "./decision-view.js";

/** One side of a compared call: what it decided and what it cost (absent when not known, e.g. an export). */
export interface ComparedSide {
  readonly version: number | null;
  readonly outcome: ComparableOutcome;
  readonly runMs?: number | undefined;
}

/** One event seen by both sides: the recorded (or active) decision and the candidate's. */
export interface DecisionPair {
  readonly point: HookPoint;
  readonly runId: string;
  readonly turn: number;
  /** The record's id in the log, when it came from there. */
  readonly id?: number | undefined;
  readonly event: JsonValue;
  readonly baseline: ComparedSide;
  readonly candidate: ComparedSide;
}

export interface PointCounts {
  readonly compared: number;
  readonly agreed: number;
  readonly differed: number;
}

export interface CostSummary {
  /** Calls with a known cost. */
  readonly calls: number;
  /** Run time in the sandbox (ms), or null when no call had a cost. */
  readonly p50: number | null;
  readonly p99: number | null;
}

export interface ComparisonDifference {
  readonly point: HookPoint;
  readonly runId: string;
  readonly turn: number;
  readonly id: number | null;
  readonly event: JsonValue;
  readonly baseline: ComparableOutcome;
  readonly candidate: ComparableOutcome;
}

/**
 * What two versions decided on the same events: replay (recorded vs candidate) and the shadow report
 * (active vs candidate) print it. `changes` counts each (baseline → candidate) outcome pair that differed,
 * keyed by outcome (`noop`, a result type, `failed:<code>`); `newFailures` are candidate failures where the
 * baseline did not fail.
 */
export interface ComparisonReport {
  readonly compared: number;
  readonly agreed: number;
  readonly differed: number;
  readonly newFailures: number;
  /** Events left out, by why (e.g. `truncated`: the event was stored cut). */
  readonly skipped: Readonly<Record<string, number>>;
  readonly byPoint: Readonly<Record<string, PointCounts>>;
  readonly changes: readonly { readonly from: string; readonly to: string; readonly count: number }[];
  readonly failures: {
    readonly baseline: Readonly<Record<string, number>>;
    readonly candidate: Readonly<Record<string, number>>;
  };
  readonly cost: { readonly baseline: CostSummary; readonly candidate: CostSummary };
  readonly versions: { readonly baseline: readonly number[]; readonly candidate: readonly number[] };
  /** The first `examples` differing events, in full. */
  readonly differences: readonly ComparisonDifference[];
}

export interface CompareOptions {
  /** How many differing events to keep in full (default 5). */
  readonly examples?: number;
  /** Counts of events left out before comparing, carried into the report. */
  readonly skipped?: Readonly<Record<string, number>>;
}

/** Compares pairs; two outcomes agree when their keys match and their results are equal as JSON values. */
export function compareDecisions(pairs: Iterable<DecisionPair>, options: CompareOptions = {}): ComparisonReport {
  const examples = options.examples ?? 5;
  let compared = 0;
  let agreed = 0;
  let newFailures = 0;
  const byPoint: Record<string, { compared: number; agreed: number; differed: number }> = {};
  const changes = new Map<string, number>();
  const failures = { baseline: {} as Record<string, number>, candidate: {} as Record<string, number> };
  const costs = { baseline: [] as number[], candidate: [] as number[] };
  const versions = { baseline: new Set<number>(), candidate: new Set<number>() };
  const differences: ComparisonDifference[] = [];
  for (const pair of pairs) {
    compared++;
    const counts = byPoint[pair.point] ?? { compared: 0, agreed: 0, differed: 0 };
    byPoint[pair.point] = counts;
    counts.compared++;
    for (const side of ["baseline", "candidate"] as const) {
      const { outcome, runMs, version } = pair[side];
      if (outcome.failure !== null) failures[side][outcome.failure] = (failures[side][outcome.failure] ?? 0) + 1;
      if (runMs !== undefined) costs[side].push(runMs);
      if (version !== null) versions[side].add(version);
    }
    if (sameOutcome(pair.baseline.outcome, pair.candidate.outcome)) {
      agreed++;
      counts.agreed++;
      continue;
    }
    counts.differed++;
    if (pair.candidate.outcome.failure !== null && pair.baseline.outcome.failure === null) newFailures++;
    const key = `${pair.baseline.outcome.key}\u0000${pair.candidate.outcome.key}`;
    changes.set(key, (changes.get(key) ?? 0) + 1);
    if (differences.length < examples) {
      const { point, runId, turn, id, event } = pair;
      const [baseline, candidate] = [pair.baseline.outcome, pair.candidate.outcome];
      differences.push({ point, runId, turn, id: id ?? null, event, baseline, candidate });
    }
  }
  return {
    compared,
    agreed,
    differed: compared - agreed,
    newFailures,
    skipped: { ...options.skipped },
    byPoint,
    changes: [...changes].map(([key, count]) => {
      const [from = "", to = ""] = key.split("\u0000");
      return { from, to, count };
    }),
    failures,
    cost: { baseline: summary(costs.baseline), candidate: summary(costs.candidate) },
    versions: {
      baseline: [...versions.baseline].sort((a, b) => a - b),
      candidate: [...versions.candidate].sort((a, b) => a - b),
    },
    differences,
  };
}

export function sameOutcome(a: ComparableOutcome, b: ComparableOutcome): boolean {
  return a.key === b.key && canonical(a.result) === canonical(b.result);
}

/** JSON with object keys sorted, so key order never makes two results differ. */
function canonical(value: JsonValue | null): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === "object" && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

function summary(values: number[]): CostSummary {
  if (values.length === 0) return { calls: 0, p50: null, p99: null };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
  return { calls: sorted.length, p50: round(at(0.5)), p99: round(at(0.99)) };
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
