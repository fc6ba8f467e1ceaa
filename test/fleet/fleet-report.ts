/**
 * What the fleet run reports, and how it is read from the hosts' messages: which versions a run could
 * decide on, each host's pick-up of each activation, each host's store outages.
 */
import type { FleetMessage, RunReport } from "./fleet-messages.js";

/** One change the operator made: what could decide a run started before `callAt` and after `retAt`. */
export interface Change {
  readonly tenant: string;
  readonly what: string;
  readonly callAt: number;
  readonly retAt: number;
  readonly before: readonly number[];
  readonly after: readonly number[];
}

export interface FleetReport {
  readonly hosts: readonly string[];
  readonly runs: readonly RunReport[];
  readonly errors: readonly Extract<FleetMessage, { type: "error" }>[];
  /** Runs whose version (or one of whose hook calls' version) no change allowed at its start. */
  readonly violations: readonly string[];
  /** Pick-up of each acme flip on each live host: ms from the activation's call, and from its return. */
  readonly pickups: readonly {
    readonly host: string;
    /** The activation's call, ms since the epoch: one per change. */
    readonly change: number;
    readonly fromCall: number;
    readonly fromReturn: number;
  }[];
  /** mallory's calls that struck (timed out on their own CPU time), before the release and after it (each episode ≤ K + hosts). */
  readonly strikes: readonly [number, number];
  /** Hosts that cut mallory off in each episode (by a local or a fleet entry). */
  readonly cutOff: readonly [readonly string[], readonly string[]];
  readonly killed: { readonly host: string; readonly at: number };
  readonly outageAt: number;
  /** When the database began refusing connections, and when it let them in again. */
  readonly down: { readonly at: number; readonly upAt: number };
  readonly restartedAt: number | undefined;
  /** Each store outage the hosts told (`store.unreachable` … `store.reachable`), in ms after the fault began. */
  readonly outages: readonly {
    readonly host: string;
    readonly fault: Fault;
    readonly lostAt: number;
    readonly backAt: number | undefined;
  }[];
  /** Each live host's decision-log counts, the rows of its runs in the table, and the drops its events told. */
  readonly stats: readonly (Extract<FleetMessage, { type: "stats" }> & {
    readonly rows: number;
    readonly told: number;
  })[];
  readonly quarantine: { readonly failures: number };
  /** Every change the operator made, in order. */
  readonly changes: readonly Change[];
  readonly durationMs: number;
}

/** How long after a change a run may still start on what was there before it: a host's pick-up. */
const PICKUP_SLACK_MS = 1_000;

/** Why a run's versions were not allowed at its start, if they were not. */
export function violation(
  run: RunReport,
  initial: Map<string, readonly number[]>,
  changes: readonly Change[],
): string[] {
  const mine = changes.filter((c) => c.tenant === run.tenant);
  const allowed = new Set(mine.filter((c) => c.retAt <= run.startedAt).at(-1)?.after ?? initial.get(run.tenant));
  for (const c of mine) {
    if (run.startedAt >= c.callAt && run.startedAt <= c.retAt + PICKUP_SLACK_MS) {
      for (const v of [...c.before, ...c.after]) allowed.add(v);
    }
  }
  const used = new Set([run.version, ...run.calls.map((c) => c.version)]);
  const bad = [...used].filter((v) => v === null || !allowed.has(v));
  return bad.length === 0 && used.size === 1
    ? []
    : [`${run.runId} (${run.tenant}) used ${[...used].join(",")}; allowed ${[...allowed].join(",")}`];
}

type Fault = "terminate" | "refuse" | "restart";

/** Each host's `store.unreachable` … `store.reachable`, timed from the fault (the last one to start before it). */
export function outagesOf(
  messages: readonly FleetMessage[],
  outageAt: number,
  downAt: number,
  restartedAt: number | undefined,
): FleetReport["outages"] {
  const result: FleetReport["outages"][number][] = [];
  const faults: [Fault, number][] = [
    ["terminate", outageAt],
    ["refuse", downAt],
    ...(restartedAt === undefined ? [] : [["restart", restartedAt] as [Fault, number]]),
  ];
  for (const m of messages) {
    if (m.type !== "store" || m.state !== "store.unreachable") continue;
    const [fault, start] = faults.filter(([, at]) => at <= m.at).at(-1) ?? ["terminate", outageAt];
    const back = messages.find(
      (b) => b.type === "store" && b.host === m.host && b.at >= m.at && b.state === "store.reachable",
    );
    result.push({
      host: m.host,
      fault,
      lostAt: m.at - start,
      backAt: back?.type === "store" ? back.at - start : undefined,
    });
  }
  return result;
}

/** Each live host's pick-up of each acme activation, outside the 3 s after an outage or restart. */
export function pickups(
  messages: readonly FleetMessage[],
  changes: readonly Change[],
  killedAt: number,
  victim: string,
  outages: readonly (number | undefined)[],
): FleetReport["pickups"] {
  const result: { host: string; change: number; fromCall: number; fromReturn: number }[] = [];
  const next = (c: Change) => changes.find((o) => o.tenant === c.tenant && o.callAt > c.callAt)?.callAt ?? Infinity;
  for (const c of changes.filter((c) => c.tenant === "acme")) {
    if (outages.some((o) => o !== undefined && c.callAt >= o && c.callAt - o < 3_000)) continue;
    const version = c.after[0];
    const hosts = new Set(messages.flatMap((m) => (m.type === "ready" ? [m.host] : [])));
    for (const host of hosts) {
      if (host === victim && c.callAt >= killedAt) continue;
      const seen = messages.find(
        (m) =>
          m.type === "pickup" &&
          m.host === host &&
          m.tenant === "acme" &&
          m.version === version &&
          m.at >= c.callAt &&
          m.at < next(c),
      );
      if (seen?.type === "pickup")
        result.push({
          host,
          change: c.callAt,
          fromCall: seen.at - c.callAt,
          fromReturn: Math.max(0, seen.at - c.retAt),
        });
    }
  }
  return result;
}

/** The p-th percentile (0–100) of values, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}
