import type { HookPoint, JsonValue } from "../protocol/index.js";
import { printable } from "../terminal/index.js";

/**
 * The comparison `isohook shadow-report` prints: pairs of a deciding call and a shadow candidate's call of
 * the same event. Two calls agree when both decided the same result (the no-op included) or both failed
 * with the same code. A point the deciding version does not export counts as its no-op.
 */

/** What the comparison reads of a `HookRecord` (a record read back from a file has these checked). */
export interface ComparedCall {
  readonly bundle?: { readonly version: number } | undefined;
  readonly outcome:
    | { readonly type: "decided"; readonly result: { readonly type: string } | null }
    | { readonly type: "failed"; readonly failure: { readonly code: string; readonly message: string } };
  readonly runMs: number;
}

/** One shadowed call as read back: the deciding call's record (none where it has no hook) and the shadow's. */
export interface ShadowPair {
  readonly runId: string;
  readonly turn: number;
  readonly point: HookPoint;
  readonly event: JsonValue;
  readonly record: ComparedCall | undefined;
  readonly shadow: ComparedCall;
}

export interface CostStats {
  readonly p50: number;
  readonly p99: number;
}

export interface ShadowDifference {
  readonly runId: string;
  readonly turn: number;
  readonly point: HookPoint;
  readonly event: JsonValue;
  readonly active: OutcomeView;
  readonly shadow: OutcomeView;
}

/** An outcome as the report shows it: its key (`noop`, the result's type, or `failed:<code>`) and details. */
export interface OutcomeView {
  readonly key: string;
  readonly version: number | null;
  readonly result?: JsonValue;
  readonly failure?: string;
}

export interface ShadowReport {
  readonly tenantId: string;
  /** The shadow versions compared (one unless shadow mode changed version in the compared range). */
  readonly shadowVersions: number[];
  readonly activeVersions: number[];
  readonly compared: number;
  readonly agreed: number;
  readonly differed: number;
  readonly byPoint: Record<string, { compared: number; agreed: number; differed: number }>;
  /** `active → shadow` outcome keys of the calls that differed, with their counts. */
  readonly byResultType: Record<string, number>;
  readonly failures: { readonly active: Record<string, number>; readonly shadow: Record<string, number> };
  /** Run time in the sandbox (ms) of each side's calls. */
  readonly cost: { readonly active: CostStats; readonly shadow: CostStats };
  /** The first few differing calls, with their events in full. */
  readonly differences: ShadowDifference[];
}

export const SHOWN_DIFFERENCES = 5;

export function compareShadow(tenantId: string, pairs: readonly ShadowPair[]): ShadowReport {
  const byPoint: Record<string, { compared: number; agreed: number; differed: number }> = {};
  const byResultType: Record<string, number> = {};
  const failures = { active: {} as Record<string, number>, shadow: {} as Record<string, number> };
  const differences: ShadowDifference[] = [];
  const activeMs: number[] = [];
  const shadowMs: number[] = [];
  let agreed = 0;
  for (const pair of pairs) {
    const active = outcomeView(pair.record);
    const shadow = outcomeView(pair.shadow);
    const point = byPoint[pair.point] ?? { compared: 0, agreed: 0, differed: 0 };
    byPoint[pair.point] = point;
    point.compared++;
    if (pair.record) activeMs.push(pair.record.runMs);
    shadowMs.push(pair.shadow.runMs);
    if (active.failure !== undefined) bump(failures.active, active.key.slice("failed:".length));
    if (shadow.failure !== undefined) bump(failures.shadow, shadow.key.slice("failed:".length));
    if (same(active, shadow)) {
      agreed++;
      point.agreed++;
      continue;
    }
    point.differed++;
    bump(byResultType, `${active.key} → ${shadow.key}`);
    if (differences.length < SHOWN_DIFFERENCES) {
      const { runId, turn, event } = pair;
      differences.push({ runId, turn, point: pair.point, event, active, shadow });
    }
  }
  return {
    tenantId,
    shadowVersions: versionsOf(pairs.map((p) => p.shadow)),
    activeVersions: versionsOf(pairs.flatMap((p) => (p.record ? [p.record] : []))),
    compared: pairs.length,
    agreed,
    differed: pairs.length - agreed,
    byPoint,
    byResultType,
    failures,
    cost: { active: stats(activeMs), shadow: stats(shadowMs) },
    differences,
  };
}

/** The report as text; tenant text (results, events, failure messages) goes through `printable`. */
export function formatShadowReport(report: ShadowReport): string {
  const versions = (v: number[]) => (v.length === 0 ? "-" : v.map((n) => `v${n}`).join(", "));
  const lines = [
    `shadow report for ${report.tenantId}: ${versions(report.shadowVersions)} beside ${versions(report.activeVersions)}`,
    `  ${report.compared} calls compared: ${report.agreed} agreed, ${report.differed} differed`,
  ];
  for (const [point, n] of Object.entries(report.byPoint)) {
    lines.push(`    ${point.padEnd(16)} ${n.compared} compared, ${n.agreed} agreed, ${n.differed} differed`);
  }
  const types = Object.entries(report.byResultType);
  if (types.length > 0) lines.push(`  differed by result: ${types.map(([k, n]) => `${k} ${n}`).join(", ")}`);
  const failed = (side: Record<string, number>) =>
    Object.keys(side).length === 0
      ? "none"
      : Object.entries(side)
          .map(([code, n]) => `${code} ${n}`)
          .join(", ");
  lines.push(`  failures: active ${failed(report.failures.active)}; shadow ${failed(report.failures.shadow)}`);
  const ms = (s: CostStats) => `p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms`;
  lines.push(`  cost (run time): active ${ms(report.cost.active)}; shadow ${ms(report.cost.shadow)}`);
  for (const [i, d] of report.differences.entries()) {
    lines.push(`  difference ${i + 1}: ${printable(d.runId)} turn ${d.turn} ${d.point}`);
    lines.push(`    active  ${outcomeText(d.active)}`);
    lines.push(`    shadow  ${outcomeText(d.shadow)}`);
    lines.push(`    event   ${printable(JSON.stringify(d.event))}`);
  }
  return `${lines.join("\n")}\n`;
}

function outcomeView(record: ComparedCall | undefined): OutcomeView {
  const version = record?.bundle?.version ?? null;
  if (record === undefined) return { key: "noop", version };
  const outcome = record.outcome;
  if (outcome.type === "failed") {
    return { key: `failed:${outcome.failure.code}`, version, failure: outcome.failure.message };
  }
  if (outcome.result === null) return { key: "noop", version };
  return { key: outcome.result.type, version, result: outcome.result as JsonValue };
}

function outcomeText(view: OutcomeView): string {
  const who = view.version === null ? "(no hook)" : `v${view.version}`;
  if (view.failure !== undefined) return printable(`${who} ${view.key}: ${view.failure}`);
  return printable(`${who} ${view.result === undefined ? "no-op" : JSON.stringify(view.result)}`);
}

function same(a: OutcomeView, b: OutcomeView): boolean {
  if (a.key !== b.key) return false;
  return a.failure !== undefined || canonical(a.result) === canonical(b.result);
}

/** JSON with object keys sorted: two results that differ only in key order agree. */
function canonical(value: JsonValue | undefined): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : 1)))
      : v,
  );
}

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

function versionsOf(records: readonly ComparedCall[]): number[] {
  return [...new Set(records.flatMap((r) => (r.bundle ? [r.bundle.version] : [])))].sort((a, b) => a - b);
}

function stats(values: number[]): CostStats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
  return { p50: round(at(0.5)), p99: round(at(0.99)) };
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
