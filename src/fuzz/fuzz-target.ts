import { callsHandler, type HandlerManifest, type InvokedHook, invokeHook } from "../dispatch/index.js";
import type {
  Failure,
  FailureCode,
  HookExecutor,
  HookPoint,
  JsonValue,
  Limits,
  SandboxBundle,
  TenantId,
} from "../protocol/index.js";

/** What is fuzzed: one bundle in the real sandbox, with the tenant config it runs with. */
export interface FuzzTarget {
  /** The sandbox (`createHookExecutor()`); the caller owns and closes it. */
  readonly executor: HookExecutor;
  readonly bundle: SandboxBundle;
  /** The bundle's points and tool matchers: an event no matcher selects is not sent, as in production. */
  readonly manifest: HandlerManifest;
  readonly tenantId: TenantId;
  /** The stored version, for `ctx.bundle.version` (0 for a bundle built from source). */
  readonly version?: number;
  /** `ctx.config` during every call. */
  readonly config: JsonValue;
  /** Must match the executor's limits: `timeoutMs` is the headroom's reference, `maxEventBytes` the growth cap. */
  readonly limits: Limits;
  /** Calls the bundle's observe-only handlers (priority `observe`) instead of its decision handlers. */
  readonly observe?: boolean;
}

/**
 * A known event to start from: mutated by the fuzz and grown by the timeout hunt. Today these come from the
 * hook's `fixtures.jsonl` (origin `fixtures.jsonl:3`); events recorded in a decision log plug in here the
 * same way when that exists (origin naming the record), nothing else changes.
 */
export interface SeedEvent {
  readonly point: HookPoint;
  readonly event: JsonValue;
  /** Where the event came from, shown in reports: `file:line`, `generated`. */
  readonly origin: string;
}

/** One distinct way a point failed, with the smallest event found that makes it fail. */
export interface FuzzFailure {
  readonly code: FailureCode;
  readonly message: string;
  /** `invalid_result`: the zod issues, each with the path of the bad field. */
  readonly issues?: Failure["issues"];
  /** `threw`: where, in the tenant's own code. */
  readonly stack?: Failure["stack"];
  /** The shrunk event (random fuzz) or the grown event that failed, whole (timeout hunt; `grown` describes it). */
  readonly event: JsonValue;
  /** The seed that replays the random fuzz that found it (`--seed`). */
  readonly seed: number;
  /** How it was found: a generated or mutated event, or an event grown by the timeout hunt. */
  readonly found: "fuzz" | "grow";
  /** For `grow`: which input was grown, how, and to what size. */
  readonly grown?: GrowthInput;
}

/** What a fuzz failure keeps of the hook's failure: its code and message, and its issues or stack if any. */
export function failureFacts(failure: Failure): Pick<FuzzFailure, "code" | "message" | "issues" | "stack"> {
  return {
    code: failure.code,
    message: failure.message,
    ...(failure.issues !== undefined ? { issues: failure.issues } : {}),
    ...(failure.stack !== undefined ? { stack: failure.stack } : {}),
  };
}

/** An input of the timeout hunt: a seed event with one string or array grown to `size`. */
export interface GrowthInput {
  /** The seed event's origin. */
  readonly origin: string;
  /** JSON path of the grown value inside the event, e.g. `call.args.command`. */
  readonly path: string;
  /**
   * `repeat`: the string (or array) repeated; `pump`: `unit` repeated inside the string, at its middle, so
   * what comes before and after stays.
   */
  readonly shape: "repeat" | "pump";
  readonly unit: string;
  /** Length of the grown value: characters for a string, items for an array. */
  readonly size: number;
  readonly kind: "string" | "array";
  /** The grown value, shortened for reading: `"ls -la && rm -rf ./bu" + "i"×4096 + "ld"`. */
  readonly preview: string;
}

/** The `ctx` JSON every fuzz call of a target runs with. */
export function fuzzCtxJson(target: FuzzTarget, runId: string): string {
  return JSON.stringify({
    tenantId: target.tenantId,
    runId,
    turn: 0,
    hookId: `tenant:${target.tenantId}`,
    bundle: { version: target.version ?? 0, hash: target.bundle.hash },
    config: target.config,
    state: {},
  });
}

/**
 * Whether production calls the target's handler at `point` for `event` (`callsHandler`, the dispatcher's
 * own answer): an event whose tool no matcher selects never reaches the handler, so it is not a finding.
 */
export function calledFor(target: FuzzTarget, point: HookPoint, event: JsonValue): boolean {
  return callsHandler(target.manifest, point, target.observe === true, event);
}

/**
 * One call of the fuzz. A `timeout` is re-run up to `retries` times and stands only if every run times
 * out: timeouts are wall-clock, and on a loaded machine a healthy call can be starved past its deadline.
 */
export async function fuzzCall(
  target: FuzzTarget,
  call: { readonly point: HookPoint; readonly eventJson: string; readonly ctxJson: string },
  signal: AbortSignal | undefined,
  retries = 1,
): Promise<InvokedHook<HookPoint>> {
  const full = {
    tenantId: target.tenantId,
    timeoutMs: target.limits.timeoutMs,
    ...(target.observe === true ? { priority: "observe" as const } : {}),
    ...call,
  };
  let invoked = await invokeHook(target.executor, target.bundle, full, target.limits, signal);
  for (let i = 0; i < retries && invoked.outcome.type === "failed" && invoked.outcome.failure.code === "timeout"; i++) {
    invoked = await invokeHook(target.executor, target.bundle, full, target.limits, signal);
  }
  return invoked;
}
