import type { LoadedScenario } from "../../agent/index.js";
import type { RunAgentResult, RunEvent } from "../../runtime/index.js";
import { type Printed, printable } from "../../terminal/index.js";

/** One tenant's demo session in numbers. */
export interface DemoTally {
  readonly tenant: string;
  /** The sandbox worker (shard) its hooks ran on. */
  readonly worker: number;
  readonly version: number | undefined;
  readonly stopReason: string;
  readonly reason: string | undefined;
  readonly turns: number;
  readonly hookCalls: number;
  /** Result types the tenant's hooks returned, in order (`block`, `rewrite`, …). */
  readonly decided: string[];
  readonly failures: Record<string, number>;
  readonly quarantined: boolean;
  /** Hook time: each call's own run time in the sandbox (what budgets charge). */
  readonly medianMs: number;
  readonly maxMs: number;
  /** Longest wait of a hook call in the sandbox without running (behind other calls on its worker). */
  readonly maxQueuedMs: number;
  /** The same after the tenant's first hook call (which meets every session starting at once). */
  readonly laterQueuedMs: number;
}

export function tallyOf(
  loaded: LoadedScenario,
  events: readonly RunEvent[],
  result: RunAgentResult | undefined,
  worker: number,
): DemoTally {
  const durations: number[] = [];
  let maxQueuedMs = 0;
  let laterQueuedMs = 0;
  const decided: string[] = [];
  const failures: Record<string, number> = {};
  let quarantined = false;
  for (const event of events) {
    if (event.type === "quarantine.entered") quarantined = true;
    if (event.type !== "hooks.decided") continue;
    for (const record of event.records) {
      if (record.outcome.type === "skipped") continue;
      if (durations.length > 0) laterQueuedMs = Math.max(laterQueuedMs, record.queuedMs ?? 0);
      durations.push(record.runMs);
      maxQueuedMs = Math.max(maxQueuedMs, record.queuedMs ?? 0);
      if (record.outcome.type === "failed") {
        const code = record.outcome.failure.code;
        failures[code] = (failures[code] ?? 0) + 1;
      } else if (record.outcome.result !== null) {
        decided.push(record.outcome.result.type);
      }
    }
  }
  durations.sort((a, b) => a - b);
  return {
    tenant: loaded.scenario.tenant,
    worker,
    version: result?.bundle?.version,
    stopReason: result?.stopReason ?? "error",
    reason: result?.reason,
    turns: result?.turns ?? 0,
    hookCalls: durations.length,
    decided,
    failures,
    quarantined,
    medianMs: durations[Math.floor(durations.length / 2)] ?? 0,
    maxMs: durations.at(-1) ?? 0,
    maxQueuedMs,
    laterQueuedMs,
  };
}

export function summaryLines(tallies: readonly DemoTally[], timeoutMs: number): Printed[] {
  const rows = tallies.map((t) => [
    t.tenant,
    String(t.worker),
    t.version === undefined ? "-" : `v${t.version}`,
    t.reason ? `${t.stopReason} (${printable(t.reason)})` : t.stopReason,
    String(t.turns),
    String(t.hookCalls),
    Object.entries(t.failures)
      .map(([code, n]) => `${n} ${code}`)
      .join(", ") || "none",
    `${t.medianMs.toFixed(1)} / ${t.maxMs.toFixed(1)} ms`,
  ]);
  const header = ["tenant", "worker", "bundle", "ended", "turns", "hook calls", "hook failures", "hook time p50 / max"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ")}`.trimEnd();
  const lines = ["Summary", line(header), ...rows.map(line)];
  const runaway = tallies.find((t) => t.quarantined);
  if (runaway) {
    const timeouts = runaway.failures.timeout ?? 0;
    lines.push(
      "",
      `  Contained: ${runaway.tenant}'s hook ran out of time ${timeouts} time${timeouts === 1 ? "" : "s"} (the ${timeoutMs} ms per-call timeout, or its`,
      "  turn's hook-time budget), each call blocked (tool.call fails closed); then its bundle was quarantined",
      (runaway.failures.quarantined ?? 0) > 0
        ? `  and ${runaway.failures.quarantined} more call${runaway.failures.quarantined === 1 ? " was" : "s were"} blocked without running.`
        : "  (no further call came while it lasted).",
    );
    // What a tenant waits with no spinner beside it: the start-up of sessions that all begin at once.
    const control = tallies
      .filter((t) => t.worker !== runaway.worker)
      .reduce<DemoTally | undefined>(
        (most, t) => (most === undefined || t.maxQueuedMs > most.maxQueuedMs ? t : most),
        undefined,
      );
    const beside =
      control === undefined
        ? ""
        : ` (${control.tenant}, with no spinner beside it: ${ms(control.maxQueuedMs)} and ${ms(control.laterQueuedMs)})`;
    for (const t of tallies) {
      if (t === runaway) continue;
      if (t.worker === runaway.worker) {
        lines.push(
          `  ${t.tenant} shares worker ${t.worker} with it: its hook calls waited up to ${waits(t)}${beside};`,
          `  held calls moved to another worker, the spins to the long-call worker; the wait is not charged to its`,
          `  hook-time budget (its own hook time: max ${t.maxMs.toFixed(1)} ms), and it ${t.stopReason}.`,
        );
      } else {
        lines.push(
          `  ${t.tenant}, on worker ${t.worker}, kept its pace (p50 ${t.medianMs.toFixed(1)} ms; its calls waited up to ${waits(t)}) and ${t.stopReason}.`,
        );
      }
    }
  }
  return lines.map((text) => printable(text));
}

/** A tenant's longest wait, and its longest after its first call (which meets every session's start-up). */
function waits(t: DemoTally): string {
  return `${ms(t.maxQueuedMs)}, ${ms(t.laterQueuedMs)} after its first call`;
}

function ms(value: number): string {
  return `${value.toFixed(0)} ms`;
}
