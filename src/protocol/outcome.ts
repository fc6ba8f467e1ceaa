import { z } from "zod";
import type { HookPoint, HookResult } from "./hook-points.js";
import type { JsonObject } from "./json.js";

/**
 * Every way a hook call can fail (docs/architecture.md, "Failure is data"). Failure is data: the dispatcher never
 * throws these.
 */
export const FailureCode = z.enum([
  "timeout",
  "memory_limit",
  "sandbox_crashed",
  "threw",
  "invalid_result",
  "result_too_large",
  "pending",
  "event_too_large",
  "quarantined",
  "unavailable",
]);
export type FailureCode = z.infer<typeof FailureCode>;

/** A zod issue kept from validating guest output, trimmed to what an operator needs. */
export const ResultIssue = z.strictObject({ path: z.array(z.union([z.string(), z.number()])), message: z.string() });
export type ResultIssue = z.infer<typeof ResultIssue>;

/** Frames kept of a failure's stack. */
export const MAX_STACK_FRAMES = 10;

/**
 * One frame of a guest stack: `file` is `bundle` (a position in the bundle script, as the host received it)
 * until mapped through the bundle's source map to the author's file (`index.ts`, relative to the hook).
 */
export const StackFrame = z.strictObject({
  name: z.string().max(200).optional(),
  file: z.string().max(500),
  line: z.int().positive(),
  column: z.int().positive(),
});
export type StackFrame = z.infer<typeof StackFrame>;

/**
 * A failed hook call. `bystander: true` marks a call that failed only because its sandbox worker died while
 * running ANOTHER call (queued behind it, or answered but not yet delivered): the supervisor sets it, never
 * the guest, and quarantine does not count it (docs/architecture.md, "The trust boundary": the tenant whose call was
 * running takes the strike).
 */
export const Failure = z.strictObject({
  code: FailureCode,
  message: z.string(),
  issues: z.array(ResultIssue).optional(),
  /** Where a `threw` failure was thrown: frames in the tenant's own code only, innermost first. */
  stack: z.array(StackFrame).max(MAX_STACK_FRAMES).optional(),
  bystander: z.literal(true).optional(),
});
export type Failure = z.infer<typeof Failure>;

/**
 * What one hook call ended in. `result: null` is the no-op (the handler returned nothing or the bundle
 * does not export the point). `state` is the run-scoped scratch the hook handed back, if it changed it.
 */
export type HookOutcome<P extends HookPoint = HookPoint> =
  | { type: "decided"; result: HookResult<P> | null; state: JsonObject | undefined; logs: string[] }
  | { type: "failed"; failure: Failure; logs: string[] };

/** Failures that count towards quarantine: the sandbox had to step in. */
export const QUARANTINE_CODES: ReadonlySet<FailureCode> = new Set([
  "timeout",
  "memory_limit",
  "sandbox_crashed",
  "pending",
]);

/** Whether a failure counts towards its bundle's quarantine: a quarantine code, and not a bystander's. */
export function countsTowardsQuarantine(failure: Failure): boolean {
  return failure.bystander !== true && QUARANTINE_CODES.has(failure.code);
}
