import { oneLine, type Printed, printable } from "../terminal/index.js";
import type { ComparisonReport, CostSummary } from "./compare.js";
import { outcomeText } from "./decision-view.js";

export interface ComparisonLabels {
  /** e.g. "recorded" (replay) or "active v3" (shadow). */
  readonly baseline: string;
  /** e.g. "v4". */
  readonly candidate: string;
}

/**
 * The comparison as lines for a terminal (replay and the shadow report print the same): counts, the
 * changes by point and by outcome, failures by code, cost of each side, then the first differing events
 * in full. Every piece of tenant text (results, reasons, events) goes through `printable`.
 */
export function formatComparison(report: ComparisonReport, labels: ComparisonLabels): Printed[] {
  const { compared, agreed, differed } = report;
  const lines = [
    `${compared} call${compared === 1 ? "" : "s"} compared: ${agreed} agreed, ${differed} differed` +
      (report.newFailures > 0 ? ` (${report.newFailures} new failure${report.newFailures === 1 ? "" : "s"})` : ""),
  ];
  const skipped = Object.entries(report.skipped).filter(([, n]) => n > 0);
  if (skipped.length > 0) lines.push(`  skipped: ${skipped.map(([why, n]) => `${n} ${why}`).join(", ")}`);
  for (const [point, counts] of Object.entries(report.byPoint)) {
    lines.push(
      `  ${point.padEnd(16)} ${counts.compared} compared, ${counts.agreed} agreed, ${counts.differed} differed`,
    );
  }
  for (const { from, to, count } of report.changes)
    lines.push(`  changed: ${from === to ? `${from}, another result` : `${from} → ${to}`} × ${count}`);
  const failures = (side: Readonly<Record<string, number>>) =>
    Object.entries(side)
      .map(([code, n]) => `${code} ${n}`)
      .join(", ") || "none";
  lines.push(
    `  failures: ${labels.baseline} ${failures(report.failures.baseline)}; ${labels.candidate} ${failures(report.failures.candidate)}`,
  );
  lines.push(
    `  run time: ${labels.baseline} ${cost(report.cost.baseline)}; ${labels.candidate} ${cost(report.cost.candidate)}`,
  );
  report.differences.forEach((d, i) => {
    const where = `${d.id === null ? "" : `#${d.id} `}${printable(d.runId)} turn ${d.turn}`;
    lines.push(`  difference ${i + 1}: ${d.point} (${where})`);
    lines.push(`    ${labels.baseline.padEnd(10)} ${outcomeText(d.baseline, 100)}`);
    lines.push(`    ${labels.candidate.padEnd(10)} ${outcomeText(d.candidate, 100)}`);
    // Clipped: an event can be megabytes; `--json` keeps it exact.
    lines.push(`    event      ${oneLine(JSON.stringify(d.event), 300)}`);
  });
  return lines.map((line) => printable(line));
}

function cost(summary: CostSummary): string {
  if (summary.p50 === null || summary.p99 === null) return "not recorded";
  return `p50 ${summary.p50.toFixed(2)} ms, p99 ${summary.p99.toFixed(2)} ms`;
}
