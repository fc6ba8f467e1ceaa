import type { HookPoint, JsonObject, JsonValue } from "../protocol/index.js";
import type { StoredDecision } from "../store/index.js";
import { oneLine, printable } from "../terminal/index.js";

/** A stored record with its JSON parsed: what `isohook decisions --json` prints and replay reads. */
export interface DecisionView {
  readonly id: number;
  readonly at: string;
  readonly tenantId: string;
  readonly runId: string;
  readonly turn: number;
  readonly point: HookPoint;
  readonly version: number;
  readonly hash: string;
  /** The event; null when it was stored truncated (then `eventText` holds its first characters). */
  readonly event: JsonValue | null;
  readonly eventText: string | null;
  readonly eventChars: number;
  readonly truncated: boolean;
  readonly ctx: JsonObject;
  /** The `HookRecord` of the call, as stored (JSON). */
  readonly record: JsonObject;
  readonly shadow: JsonObject | null;
}

export function viewOf(stored: StoredDecision): DecisionView {
  return {
    id: stored.id,
    at: stored.at,
    tenantId: stored.tenantId,
    runId: stored.runId,
    turn: stored.turn,
    point: stored.point,
    version: stored.version,
    hash: stored.hash,
    event: stored.truncated ? null : parsed(stored.event),
    eventText: stored.truncated ? stored.event : null,
    eventChars: stored.eventChars,
    truncated: stored.truncated,
    ctx: ctxOf(stored),
    record: recordOf(stored),
    shadow: stored.shadow === null ? null : object(stored.shadow),
  };
}

/** What the recorded outcome was, keyed for comparison: `noop`, the result's type, or `failed:<code>`. */
export type OutcomeKey = string;

/** The outcome of a record (a stored `HookRecord`'s JSON, or a fresh one), as a comparable value. */
export interface ComparableOutcome {
  readonly key: OutcomeKey;
  /** The decided result, or null for the no-op and for failures. */
  readonly result: JsonValue | null;
  readonly failure: string | null;
}

export function outcomeOf(record: JsonObject): ComparableOutcome {
  const outcome = record.outcome as JsonObject | undefined;
  if (outcome?.type === "failed") {
    const failure = outcome.failure as JsonObject | undefined;
    const code = typeof failure?.code === "string" ? failure.code : "unknown";
    return { key: `failed:${code}`, result: null, failure: code };
  }
  const result = (outcome?.result ?? null) as JsonValue | null;
  if (result === null) return { key: "noop", result: null, failure: null };
  const type = typeof result === "object" && !Array.isArray(result) ? result.type : undefined;
  return { key: typeof type === "string" ? type : "decided", result, failure: null };
}

/** One line for a terminal: `block “reason”`, `rewrite {…}`, `no-op`, `failed: timeout`; tenant text escaped. */
export function outcomeText(outcome: ComparableOutcome, width = 60): string {
  if (outcome.failure !== null) return `failed: ${printable(outcome.failure)}`;
  if (outcome.result === null) return "no-op";
  const { type, ...rest } = outcome.result as JsonObject;
  const reason = typeof rest.reason === "string" && Object.keys(rest).length === 1 ? `“${rest.reason}”` : undefined;
  const detail = reason ?? (Object.keys(rest).length === 0 ? "" : JSON.stringify(rest));
  return oneLine(`${String(type)} ${detail}`.trim(), width);
}

/**
 * A record as a line of an events file that `isohook test --events` accepts: point, event, the ctx it saw
 * (run id, turn, config, state) and, for a decided call, the recorded outcome as `expect`, so testing a
 * candidate against the export flags every changed decision. Undefined for a truncated event.
 */
export function exportLine(view: DecisionView): string | undefined {
  if (view.event === null) return undefined;
  const ctx: JsonObject = { turn: view.turn, bundle: { version: view.version } };
  if (typeof view.ctx.runId === "string") ctx.runId = view.ctx.runId;
  if (view.ctx.config !== undefined) ctx.config = view.ctx.config;
  if (typeof view.ctx.state === "object" && view.ctx.state !== null) ctx.state = view.ctx.state;
  const outcome = outcomeOf(view.record);
  const line: JsonObject = {
    name: `decision ${view.id} (${view.runId.slice(0, 120)} turn ${view.turn}, v${view.version})`,
    point: view.point,
    event: view.event,
    ctx,
  };
  if (outcome.failure === null) line.expect = outcome.result === null ? { noop: true } : outcome.result;
  return JSON.stringify(line);
}

/**
 * The deciding call's `HookRecord` as JSON: the stored record with the point, hook id and bundle its row's
 * columns hold (a record written before it was stored that small holds them itself, which then win).
 */
export function recordOf(stored: StoredDecision): JsonObject {
  const kept = object(stored.record);
  const record: JsonObject = { point: stored.point, hookId: hookIdOf(stored) };
  // In the order of a `HookRecord`'s keys: point, hook id, source, bundle, then the rest.
  if (kept.source !== undefined) record.source = kept.source;
  record.bundle = { version: stored.version, hash: stored.hash };
  return Object.assign(record, kept);
}

function hookIdOf(stored: StoredDecision): string {
  return `tenant:${stored.tenantId}@v${stored.version}`;
}

/**
 * The ctx the hook saw: the row's columns plus the stored `{config, state}` (a record written before the
 * ctx was stored that small holds the whole ctx, which then wins).
 */
function ctxOf(stored: StoredDecision): JsonObject {
  const kept = object(stored.ctx);
  const ctx: JsonObject = {
    tenantId: stored.tenantId,
    runId: stored.runId,
    hookId: hookIdOf(stored),
    bundle: { version: stored.version, hash: stored.hash },
  };
  // In the order the hook saw its keys: config, turn, state.
  if (kept.config !== undefined) ctx.config = kept.config;
  ctx.turn = stored.turn;
  return Object.assign(ctx, kept);
}
function parsed(json: string): JsonValue | null {
  try {
    return JSON.parse(json) as JsonValue;
  } catch {
    return null;
  }
}

function object(json: string): JsonObject {
  const value = parsed(json);
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
}
