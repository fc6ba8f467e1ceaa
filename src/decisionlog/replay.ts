import { callsHandler, invokeHook } from "../dispatch/index.js";
import {
  type ActiveBundle,
  HOOK_POINT_NAMES,
  type HookExecutor,
  type HookOutcome,
  type HookPoint,
  type JsonObject,
  type JsonValue,
  type Limits,
} from "../protocol/index.js";
import { type ComparedSide, type ComparisonReport, compareDecisions, type DecisionPair } from "./compare.js";
import { type ComparableOutcome, type DecisionView, outcomeOf } from "./decision-view.js";

/** One recorded call to run again: the event and ctx it saw, and what was decided then. */
export interface ReplayRecord {
  readonly id?: number | undefined;
  readonly point: HookPoint;
  readonly runId: string;
  readonly turn: number;
  /** Null when the event was stored truncated: it cannot be run again. */
  readonly event: JsonValue | null;
  readonly ctx: JsonObject;
  /** What was decided then; null when not known (an export line of a call that failed). */
  readonly baseline: ComparedSide | null;
}

export interface ReplayOptions {
  readonly executor: HookExecutor;
  /** The version to run the records through, with its config. */
  readonly candidate: ActiveBundle;
  readonly records: Iterable<ReplayRecord>;
  readonly limits: Limits;
  /** How many differing events the report keeps in full (default 5). */
  readonly examples?: number;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Runs recorded calls through a candidate version in the sandbox, one at a time, and compares its
 * outcomes with the recorded ones. Each call gets the recorded event and the recorded ctx (run id, turn,
 * and the `state` the hook had then), with the candidate's own hook id, bundle and config. A point the
 * candidate does not call (not exported, or its tool matcher does not select the tool) is its no-op, as in a run. The candidate's hook is asked directly, without the
 * point's stacking checks (an invalid rewrite the dispatcher would have refused shows as the rewrite).
 */
export async function replayDecisions(options: ReplayOptions): Promise<ComparisonReport> {
  const { executor, candidate, limits, signal } = options;
  const sandboxBundle = { hash: candidate.manifest.hash, code: candidate.code };
  const bundle = { version: candidate.version, hash: candidate.manifest.hash };
  const hookId = `tenant:${candidate.tenantId}@v${candidate.version}`;
  const skipped = { truncated: 0, "without a recorded decision": 0 };
  const pairs: DecisionPair[] = [];
  for (const record of options.records) {
    signal?.throwIfAborted();
    if (record.event === null) {
      skipped.truncated++;
      continue;
    }
    if (record.baseline === null) {
      skipped["without a recorded decision"]++;
      continue;
    }
    let side: ComparedSide;
    if (!callsHandler(candidate.manifest, record.point, false, record.event)) {
      side = { version: candidate.version, outcome: { key: "noop", result: null, failure: null }, runMs: 0 };
    } else {
      const ctx = { ...record.ctx, tenantId: candidate.tenantId, hookId, bundle, config: candidate.config };
      const invoked = await invokeHook(
        executor,
        sandboxBundle,
        {
          tenantId: candidate.tenantId,
          point: record.point,
          eventJson: JSON.stringify(record.event),
          ctxJson: JSON.stringify(ctx),
          timeoutMs: limits.timeoutMs,
        },
        limits,
        signal,
      );
      side = { version: candidate.version, outcome: comparable(invoked.outcome), runMs: invoked.cost.runMs };
    }
    const { id, point, runId, turn, event } = record;
    pairs.push({ id, point, runId, turn, event, baseline: record.baseline, candidate: side });
  }
  return compareDecisions(pairs, {
    skipped,
    ...(options.examples !== undefined ? { examples: options.examples } : {}),
  });
}

/** A fresh outcome as the comparison sees it. */
export function comparable(outcome: HookOutcome<HookPoint>): ComparableOutcome {
  if (outcome.type === "failed") {
    return { key: `failed:${outcome.failure.code}`, result: null, failure: outcome.failure.code };
  }
  return outcomeOf({ outcome: { type: "decided", result: (outcome.result ?? null) as JsonValue } });
}

/** A record read from the log. */
export function replayRecordOf(view: DecisionView): ReplayRecord {
  const runMs = view.record.runMs;
  return {
    id: view.id,
    point: view.point,
    runId: view.runId,
    turn: view.turn,
    event: view.event,
    ctx: view.ctx,
    baseline: {
      version: view.version,
      outcome: outcomeOf(view.record),
      runMs: typeof runMs === "number" ? runMs : undefined,
    },
  };
}

/**
 * A line of `isohook decisions --export` (the events-file format): its `expect` is what was decided then
 * (`{"noop": true}` or the result); a line without one has no recorded decision. Returns a message for a
 * line that is not such a line.
 */
export function replayRecordOfLine(value: unknown): ReplayRecord | string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "not a JSON object";
  const line = value as JsonObject;
  const point = line.point;
  if (typeof point !== "string" || !(HOOK_POINT_NAMES as string[]).includes(point))
    return `"point" must be a hook point, got ${JSON.stringify(point)}`;
  if (line.event === undefined) return 'no "event"';
  const ctx = typeof line.ctx === "object" && line.ctx !== null && !Array.isArray(line.ctx) ? line.ctx : {};
  const expect = line.expect;
  const bundle = ctx.bundle as JsonObject | undefined;
  const version = typeof bundle?.version === "number" ? bundle.version : null;
  let baseline: ComparedSide | null = null;
  if (typeof expect === "object" && expect !== null && !Array.isArray(expect)) {
    const outcome =
      expect.noop === true
        ? outcomeOf({ outcome: { type: "decided", result: null } })
        : outcomeOf({ outcome: { type: "decided", result: expect } });
    baseline = { version, outcome };
  }
  const { bundle: _, ...rest } = ctx;
  return {
    point: point as HookPoint,
    runId: typeof ctx.runId === "string" ? ctx.runId : "-",
    turn: typeof ctx.turn === "number" ? ctx.turn : 0,
    event: line.event,
    ctx: rest,
    baseline,
  };
}

/**
 * A stored record with a shadow record as the pair the shadow report compares: the active version's
 * outcome against the candidate's on the same event. Undefined without a shadow record or a whole event.
 */
export function shadowPairOf(view: DecisionView): DecisionPair | undefined {
  if (view.shadow === null || view.event === null) return undefined;
  const { id, point, runId, turn, event } = view;
  return { id, point, runId, turn, event, baseline: comparedSide(view.record), candidate: comparedSide(view.shadow) };
}

/** One side of a comparison from a stored or emitted `HookRecord` (as JSON): its version, outcome and run time. */
export function comparedSide(record: JsonObject): ComparedSide {
  const bundle = record.bundle;
  const version =
    typeof bundle === "object" && bundle !== null && !Array.isArray(bundle) && typeof bundle.version === "number"
      ? bundle.version
      : null;
  return { version, outcome: outcomeOf(record), runMs: typeof record.runMs === "number" ? record.runMs : undefined };
}
