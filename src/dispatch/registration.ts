import type { z } from "zod";
import type {
  BundleRef,
  HOOK_POINTS,
  HookEvent,
  HookId,
  HookPoint,
  JsonObject,
  JsonValue,
  RunId,
  TenantId,
} from "../protocol/index.js";

/**
 * `closed` turns a hook's failure into the point's safe decision (`tool.call` → block with the failure
 * code as reason, `input.inbound` → drop, elsewhere → stop); `open` turns it into the no-op.
 */
export type FailurePolicy = "closed" | "open";

/** A policy per hook point; points left out take `DEFAULT_POLICY` (each point's row in `RULES`). */
export type PolicyMap = Partial<Record<HookPoint, FailurePolicy>>;

export type HookSource = "platform" | "tenant";

/** The `ctx` a platform hook receives: the tenant hook's ctx, plus the run's signal; `bundle` is the tenant's, if any. */
export interface PlatformHookContext {
  readonly tenantId: TenantId;
  readonly runId: RunId;
  readonly turn: number;
  readonly hookId: HookId;
  readonly bundle: BundleRef | undefined;
  readonly config: JsonValue;
  /** Run-scoped scratch of this registration: mutate it in place, it is handed back on the next call of the run. */
  readonly state: JsonObject;
  readonly signal: AbortSignal;
}

type Points = typeof HOOK_POINTS;

/** What a platform handler of point P may return: a result of that point (validated like a tenant's), or nothing. */
export type PlatformReturn<P extends HookPoint> = z.input<Points[P]["result"]> | undefined;

/** The event is the live value: read it, never mutate it (return a rewrite instead). */
export type PlatformHandler<P extends HookPoint> = (
  event: HookEvent<P>,
  ctx: PlatformHookContext,
) => PlatformReturn<P> | Promise<PlatformReturn<P>>;

/** Handler keys as in a hook module: the camelCase of the point (`tool.call` → `toolCall`). */
export type PlatformHandlers = { [P in HookPoint as Points[P]["handler"]]?: PlatformHandler<P> };

/**
 * Trusted, in-process hooks of the platform. `first` hooks run before the tenant's bundle, `last` hooks
 * after it (so they see, and can veto, what the tenant rewrote); within a position, in registration order.
 * Their results are validated with the same schemas as a tenant's; a throw is the failure `threw`.
 *
 * ```ts
 * dispatcher.registerPlatformHooks({
 *   id: "platform:audit",
 *   position: "last",
 *   hooks: { toolCall: (event) => (event.call.name === "wire_money" ? { type: "block", reason: "not here" } : undefined) },
 * });
 * ```
 */
export interface PlatformHooks {
  /** A hook id (letters, digits and . _ : @ / -), unique among registered platform hooks. */
  readonly id: string;
  readonly position: "first" | "last";
  readonly hooks: PlatformHandlers;
  /** Failure policy per point; default `DEFAULT_POLICY`. The tenant floor does not apply to platform hooks. */
  readonly policy?: PolicyMap;
  /** Handed to the hooks as `ctx.config`; default `null`. */
  readonly config?: JsonValue;
}
