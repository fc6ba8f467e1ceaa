import { z } from "zod";
import { FailureCode, HOOK_POINT_NAMES, type HookPoint } from "../../protocol/index.js";

/**
 * A hook call's `HookRecord` as JSON (in a `hook.called` line of `run --json`, or as the decision log
 * stores it): what `isohook stats` reads of it. The result's content, logs and the failure's message are
 * not read.
 */
const CalledRecord = z.looseObject({
  point: z.enum(HOOK_POINT_NAMES as [HookPoint, ...HookPoint[]]),
  outcome: z.discriminatedUnion("type", [
    z.looseObject({ type: z.literal("decided"), result: z.looseObject({ type: z.string() }).nullable() }),
    z.looseObject({ type: z.literal("failed"), failure: z.looseObject({ code: FailureCode }) }),
  ]),
  cpuMs: z.number(),
  runMs: z.number(),
  queuedMs: z.number().optional(),
  loadMs: z.number().optional(),
});
type CalledRecord = z.infer<typeof CalledRecord>;

/** A `hook.called` event as `isohook run --json` prints it (or inside a `demo --json` line's `event`). */
const HookCalledLine = z.looseObject({
  type: z.literal("hook.called"),
  at: z.iso.datetime(),
  tenantId: z.string(),
  record: CalledRecord,
});

/** Nearest-rank percentiles of one cost field of a point's calls, in ms. */
export interface Percentiles {
  readonly p50: number;
  readonly p99: number;
}

export interface PointStats {
  readonly point: HookPoint;
  readonly calls: number;
  readonly runMs: Percentiles;
  readonly cpuMs: Percentiles;
  /** What the caller waited (`queuedMs + loadMs + runMs`). */
  readonly waitedMs: Percentiles;
}

export interface TenantStats {
  readonly calls: number;
  /** Decided calls by result type (`noop` for a hook that returned nothing). */
  readonly decisions: Record<string, number>;
  /** Failed calls by failure code. */
  readonly failures: Record<string, number>;
  readonly points: PointStats[];
}

/** Why a line or record is not a hook call this tally can read (where it is, and what is wrong). */
export class StatsLineError extends Error {}

interface Costs {
  readonly run: number[];
  readonly cpu: number[];
  readonly waited: number[];
}

/**
 * Tallies one tenant's hook calls, keeping those at or after `since`: from JSON lines of a run trace
 * (`addLine`: lines that are not `hook.called` events are skipped; a line that is not JSON, or a
 * `hook.called` whose record lacks what stats need, is a `StatsLineError`), or from decision-log records
 * (`addRecord`).
 */
export class StatsTally {
  readonly #tenantId: string;
  readonly #since: number | undefined;
  readonly #decisions = new Map<string, number>();
  readonly #failures = new Map<string, number>();
  readonly #costs = new Map<HookPoint, Costs>();
  #calls = 0;

  constructor(tenantId: string, since: number | undefined) {
    this.#tenantId = tenantId;
    this.#since = since;
  }

  addLine(text: string, lineNumber: number): void {
    if (text.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new StatsLineError(`line ${lineNumber} is not JSON`);
    }
    const event = isObject(value) && isObject(value.event) ? value.event : value;
    if (!isObject(event) || event.type !== "hook.called") return;
    const parsed = HookCalledLine.safeParse(event);
    if (!parsed.success)
      throw new StatsLineError(`line ${lineNumber} is a hook.called event ${unreadable(parsed.error)}`);
    if (parsed.data.tenantId === this.#tenantId) this.#add(parsed.data.record, parsed.data.at);
  }

  /** One decision-log record of this tenant (`id` names it in an error). */
  addRecord(record: unknown, at: string, id: number): void {
    const parsed = CalledRecord.safeParse(record);
    if (!parsed.success) throw new StatsLineError(`decision ${id} holds a record ${unreadable(parsed.error)}`);
    this.#add(parsed.data, at);
  }

  result(): TenantStats {
    const points = HOOK_POINT_NAMES.flatMap((point): PointStats[] => {
      const costs = this.#costs.get(point);
      if (costs === undefined) return [];
      return [
        {
          point,
          calls: costs.run.length,
          runMs: percentiles(costs.run),
          cpuMs: percentiles(costs.cpu),
          waitedMs: percentiles(costs.waited),
        },
      ];
    });
    return {
      calls: this.#calls,
      decisions: Object.fromEntries(this.#decisions),
      failures: Object.fromEntries(this.#failures),
      points,
    };
  }

  #add(record: CalledRecord, at: string): void {
    if (this.#since !== undefined && Date.parse(at) < this.#since) return;
    this.#calls++;
    if (record.outcome.type === "failed") bump(this.#failures, record.outcome.failure.code);
    else bump(this.#decisions, record.outcome.result?.type ?? "noop");
    let costs = this.#costs.get(record.point);
    if (costs === undefined) {
      costs = { run: [], cpu: [], waited: [] };
      this.#costs.set(record.point, costs);
    }
    costs.run.push(record.runMs);
    costs.cpu.push(record.cpuMs);
    costs.waited.push(record.runMs + (record.queuedMs ?? 0) + (record.loadMs ?? 0));
  }
}

function unreadable(error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue === undefined ? "" : ` at \`${issue.path.join(".")}\`: ${issue.message}`;
  return `stats cannot read${where}`;
}

function percentiles(samples: number[]): Percentiles {
  const sorted = samples.sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? 0;
  return { p50: round(rank(0.5)), p99: round(rank(0.99)) };
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
