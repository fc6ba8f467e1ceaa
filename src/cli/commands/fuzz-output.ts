import type { FuzzFailure, FuzzReport, GrowthFlag, PointReport } from "../../fuzz/index.js";
import { failureText, type HookPoint } from "../../protocol/index.js";
import { clipped, line, type Printed } from "../../terminal/index.js";

/**
 * A fuzz report as lines for people: per point the runs and outcomes, CPU and headroom, each failure with
 * its event and the command that replays it, then the timeout hunt and its flags; last the verdict.
 */
export function fuzzReportLines(report: FuzzReport, label: string, replay: (point: HookPoint) => string): Printed[] {
  const lines = [
    line`fuzz ${label} · ${report.hash.slice(0, 19)}… · seed ${report.seed} · ${seconds(report.durationMs)}`,
  ];
  for (const point of report.points) {
    lines.push(line`${point.point}: ${point.runs} runs · ${outcomes(point)}`);
    if (point.cpu) {
      const { p50Ms, p99Ms, maxMs, p99OfTimeout } = point.cpu;
      lines.push(
        line`  cpu p50 ${ms(p50Ms)} · p99 ${ms(p99Ms)} · max ${ms(maxMs)} — p99 at ${percent(p99OfTimeout)} of ${report.timeoutMs} ms`,
      );
    }
    for (const failure of point.failures) lines.push(...failureLines(failure, replay(point.point)));
    if (point.growth) {
      const g = point.growth;
      const reach = g.largestSize > 0 ? `, up to ${size(g.largestSize)}` : "";
      const cut = g.complete ? "" : " (time budget reached first)";
      lines.push(line`  growth: ${g.series} inputs grown${reach}, ${g.calls} calls, ${seconds(g.durationMs)}${cut}`);
      if (g.peak) {
        const { input, cpuMs } = g.peak;
        lines.push(
          line`    costliest: ${input.path} at ${size(input.size, input.kind)} took ${ms(cpuMs)} (${percent(cpuMs / report.timeoutMs)} of ${report.timeoutMs} ms)`,
        );
      }
      if (g.starved > 0)
        lines.push(
          line`    ${count(g.starved, "input")} stopped by timeouts of a busy machine (under half the timeout in CPU)`,
        );
      if (g.flags.length === 0) lines.push(line`    no super-linear growth`);
      for (const flag of g.flags) lines.push(...flagLines(flag, report.timeoutMs));
    }
  }
  const failures = report.points.reduce((n, p) => n + p.failures.length, 0);
  const flags = report.points.reduce((n, p) => n + (p.growth?.flags.length ?? 0), 0);
  lines.push(report.clean ? line`clean` : line`FAILED: ${count(failures, "failure")}, ${count(flags, "growth flag")}`);
  return lines;
}

/** One line of a fleet sweep: the tenant, its version, the verdict and what stands out. */
export function sweepLine(report: FuzzReport, tenantWidth = 0): Printed {
  const head = `${report.tenantId.padEnd(tenantWidth)}  v${String(report.version ?? "?").padEnd(3)}  ${report.hash.slice(7, 19)}`;
  const runs = report.points.reduce((n, p) => n + p.runs, 0);
  const worst = Math.max(0, ...report.points.map((p) => p.cpu?.p99OfTimeout ?? 0));
  const facts = `${count(report.points.length, "point")}, ${runs} runs, p99 at ${percent(worst)} of ${report.timeoutMs} ms, ${seconds(report.durationMs)}`;
  if (report.clean) return line`${head}  clean    ${facts}`;
  const findings: string[] = [];
  for (const point of report.points) {
    for (const f of point.failures) {
      const how = f.grown ? line`at ${f.grown.path} of ${size(f.grown.size, f.grown.kind)}` : `(seed ${f.seed})`;
      findings.push(line`${point.point} ${f.code} ${how}`);
    }
    for (const flag of point.growth?.flags ?? [])
      findings.push(
        line`${point.point} ${flag.input.path} slope ${flag.slope.toFixed(2)}, timeout at ~${size(flag.projectedSize, flag.input.kind)}`,
      );
  }
  return line`${head}  FAILED   ${findings.join("; ")} — ${facts}`;
}

function outcomes(point: PointReport): string {
  const list = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${n}`)
      .join(", ");
  const parts = [];
  if (Object.keys(point.decided).length > 0) parts.push(`decided: ${list(point.decided)}`);
  if (Object.keys(point.failed).length > 0) parts.push(`failed: ${list(point.failed)}`);
  if (point.skipped > 0) parts.push(`skipped ${point.skipped} (no tool matcher selects them)`);
  return parts.join(" · ") || "no calls";
}

function failureLines(failure: FuzzFailure, replay: string): Printed[] {
  const lines = [line`  ✗ ${failureText(failure)}`];
  if (failure.grown) {
    const g = failure.grown;
    lines.push(line`      input: ${g.origin} with ${g.path} = ${g.preview} (${size(g.size, g.kind)})`);
  } else {
    lines.push(line`      event: ${clipped(JSON.stringify(failure.event), 300)}`);
  }
  lines.push(line`      replay: ${replay}`);
  return lines;
}

function flagLines(flag: GrowthFlag, timeoutMs: number): Printed[] {
  const { input } = flag;
  const last = flag.points[flag.points.length - 1];
  const where = flag.beyondCap ? " (beyond the event cap)" : "";
  return [
    line`  ⚠ super-linear: ${input.path} grows CPU as size^${flag.slope.toFixed(2)}; a call reaches ${timeoutMs} ms at ~${size(flag.projectedSize, input.kind)}${where}`,
    line`      input: ${input.origin} with ${input.path} = ${input.preview}${last ? ` → ${ms(last.cpuMs)}` : ""}`,
    line`      measured: ${flag.points.map((p) => `${size(p.size, input.kind)} ${ms(p.cpuMs)}`).join(", ")}${flag.alike > 0 ? ` · ${count(flag.alike, "other input")} alike` : ""}`,
  ];
}

function size(n: number, kind: "string" | "array" = "string"): string {
  const unit = kind === "array" ? "items" : "chars";
  if (!Number.isFinite(n)) return `∞ ${unit}`;
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} M ${unit}`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} K ${unit}`;
  return `${n} ${unit}`;
}

function ms(value: number): string {
  return value >= 10 ? `${value.toFixed(1)} ms` : `${value.toFixed(2)} ms`;
}

function percent(share: number): string {
  const value = share * 100;
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} %`;
}

function seconds(value: number): string {
  return `${(value / 1000).toFixed(1)} s`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
