import type { DecisionEntry, HookRecord } from "../dispatch/index.js";
import type { JsonValue } from "../protocol/index.js";
import type { DecisionRow } from "../store/index.js";
import { applyMask, type MaskPlan } from "./masking.js";

/**
 * Turns a dispatcher entry into the row the store keeps: the mask applied first (event, ctx, and the
 * result in the record and the shadow record), then the event capped at `maxEventChars` (stored as its
 * first characters and marked `truncated`, with its whole length). The stored ctx is `{config, state}` and
 * the stored record has no point, hook id or bundle: those are the row's own columns (`viewOf` puts them back). Runs in the writer, never on a hook call.
 */
export function toDecisionRow(entry: DecisionEntry, mask: MaskPlan, maxEventChars: number): DecisionRow | undefined {
  const bundle = entry.record.bundle;
  if (bundle === undefined) return undefined;
  const salt = entry.tenantId;
  const whole = mask.event.length === 0 ? entry.eventJson : masked(entry.eventJson, mask, "event", salt);
  const truncated = whole.length > maxEventChars;
  const ctx = `{"config":${entry.configJson},"state":${entry.stateJson}}`;
  return {
    tenantId: entry.tenantId,
    at: entry.at,
    runId: entry.runId,
    turn: entry.turn,
    point: entry.point,
    version: bundle.version,
    hash: bundle.hash,
    event: truncated ? cut(whole, maxEventChars) : whole,
    eventChars: whole.length,
    truncated,
    ctx: mask.ctx.length === 0 ? ctx : masked(ctx, mask, "ctx", salt),
    record: recordJson(withoutColumns(entry.record), mask, salt),
    shadow: entry.shadow === undefined ? null : recordJson(entry.shadow, mask, salt),
  };
}

function masked(json: string, mask: MaskPlan, root: "event" | "ctx", salt: string): string {
  let value: JsonValue;
  try {
    value = JSON.parse(json) as JsonValue;
  } catch {
    return "null"; // never happens for strings the dispatcher built; and unmaskable text is not written
  }
  return applyMask(value, mask[root], salt) ? JSON.stringify(value) : json;
}

/** The deciding record less what the row's columns say (point, hook id, bundle); `recordOf` puts it back. */
function withoutColumns(record: HookRecord): Omit<HookRecord, "point" | "hookId" | "bundle"> {
  const { point: _point, hookId: _hookId, bundle: _bundle, ...rest } = record;
  return rest;
}

function recordJson(record: Omit<HookRecord, "point" | "hookId" | "bundle">, mask: MaskPlan, salt: string): string {
  const { outcome } = record;
  if (mask.result.length === 0 || outcome.type !== "decided" || outcome.result === null) return JSON.stringify(record);
  const result = JSON.parse(JSON.stringify(outcome.result)) as JsonValue;
  applyMask(result, mask.result, salt);
  return JSON.stringify({ ...record, outcome: { ...outcome, result } });
}

/** The first `max` characters, never ending inside a surrogate pair (PostgreSQL refuses a lone surrogate). */
function cut(text: string, max: number): string {
  const end = max > 0 && /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return text.slice(0, end);
}
