import { z } from "zod";
import {
  DEFAULT_LIMITS,
  describeValue,
  HOOK_POINT_NAMES,
  type HookExecutor,
  type HookPoint,
  Limits,
  type TenantId,
} from "../protocol/index.js";
import type { DecisionSink } from "./decision-sink.js";
import { DispatchError } from "./errors.js";
import type { Emit } from "./events.js";
import type { QuarantineLedger } from "./quarantine-ledger.js";
import type { PolicyMap } from "./registration.js";

const int = (name: string, min: number, max: number, fallback: number) =>
  z
    .number({ error: (issue) => `Expected \`${name}\` to be a number, got \`${describeValue(issue.input)}\`` })
    .int({ error: (issue) => `Expected \`${name}\` to be an integer, got \`${describeValue(issue.input)}\`` })
    .min(min, {
      error: (issue) =>
        `Expected \`${name}\` to be an integer from ${min} to ${max}, got \`${describeValue(issue.input)}\``,
    })
    .max(max, {
      error: (issue) =>
        `Expected \`${name}\` to be an integer from ${min} to ${max}, got \`${describeValue(issue.input)}\``,
    })
    .default(fallback);

const fn = <T>(name: string) =>
  z.custom<T>((v) => typeof v === "function", {
    error: (issue) => `Expected \`${name}\` to be a function, got \`${describeValue(issue.input)}\``,
  });

const Policy = z.enum(["closed", "open"]);
const PolicyMapSchema = z.partialRecord(z.enum(HOOK_POINT_NAMES as [HookPoint, ...HookPoint[]]), Policy);

export type FloorInput = PolicyMap | ((tenantId: TenantId) => PolicyMap | undefined);

const HOUR = 3_600_000;

export const DispatcherOptions = z.strictObject({
  executor: z.custom<HookExecutor>(
    (v) =>
      typeof v === "object" &&
      v !== null &&
      typeof (v as { execute?: unknown }).execute === "function" &&
      typeof (v as { describe?: unknown }).describe === "function",
    { error: "Expected `executor` to be a HookExecutor (an object with `execute` and `describe`)" },
  ),
  /**
   * Limits of the sandbox calls: the per-call timeout, event/result/state caps. Defaults: docs/architecture.md,
   * "Limits".
   */
  limits: Limits.default(DEFAULT_LIMITS),
  /** Receives one event per hook call and per quarantine change, synchronously; a throw is ignored. */
  emit: fn<Emit>("emit").optional(),
  /**
   * The decision log: asked once per run whether to record it, then given each tenant hook call of the runs
   * it wants (synchronously; it must queue, not block). Off when absent.
   */
  decisionLog: z
    .custom<DecisionSink>(
      (v) =>
        typeof v === "object" &&
        v !== null &&
        typeof (v as { record?: unknown }).record === "function" &&
        typeof (v as { sampled?: unknown }).sampled === "function",
      { error: "Expected `decisionLog` to be a DecisionSink (an object with `sampled` and `record`)" },
    )
    .optional(),
  /**
   * Quarantine shared by the hosts of a fleet: failures are reported to `ledger` (the shared store's
   * `quarantine`) as `host`, and its entries apply here too. Absent: this dispatcher's book is its own.
   */
  fleet: z
    .custom<{ readonly ledger: QuarantineLedger; readonly host: string }>(
      (v) =>
        typeof v === "object" &&
        v !== null &&
        typeof (v as { host?: unknown }).host === "string" &&
        (v as { host: string }).host.length > 0 &&
        typeof (v as { ledger?: { report?: unknown } }).ledger?.report === "function",
      { error: "Expected `fleet` to be {ledger: a QuarantineLedger (with `report` and `watch`), host: a name}" },
    )
    .optional(),
  /** Milliseconds since some epoch; `Date.now` by default. Quarantine and event times read it. */
  clock: fn<() => number>("clock").default(() => Date.now),
  budgets: z
    .strictObject({
      /** Sandbox hook time per turn (ms). */
      turnMs: int("budgets.turnMs", 1, HOUR, 250),
      /** Sandbox hook time per run (ms). */
      runMs: int("budgets.runMs", 1, 24 * HOUR, 5_000),
    })
    .default({ turnMs: 250, runMs: 5_000 }),
  quarantine: z
    .strictObject({
      /** K: failures of the quarantine kinds within `windowMs` that put a (tenant, bundle) in quarantine. */
      failures: int("quarantine.failures", 1, 1_000_000, 5),
      windowMs: int("quarantine.windowMs", 1, 24 * HOUR, 60_000),
      /** The first cooldown; each further entry doubles it, up to `maxCooldownMs`. */
      cooldownMs: int("quarantine.cooldownMs", 1, 24 * HOUR, 30_000),
      maxCooldownMs: int("quarantine.maxCooldownMs", 1, 7 * 24 * HOUR, HOUR),
      /** A bundle quiet this long after a quarantine ended starts over at `cooldownMs`. */
      forgetAfterMs: int("quarantine.forgetAfterMs", 1, 7 * 24 * HOUR, 10 * 60_000),
    })
    .default({ failures: 5, windowMs: 60_000, cooldownMs: 30_000, maxCooldownMs: HOUR, forgetAfterMs: 10 * 60_000 }),
  /** OpenTelemetry, when the platform registered an SDK (isohook uses `@opentelemetry/api` only). */
  telemetry: z
    .strictObject({
      /** Distinct tenants each metric reports by id; the rest are reported together as `other`. */
      maxTenants: int("telemetry.maxTenants", 0, 1_000_000, 100),
      /** A span event on the turn span per streamed delta (its kind and size, never its text). Default off. */
      streamEvents: z.boolean().default(false),
    })
    .default({ maxTenants: 100, streamEvents: false }),
  /**
   * The platform floor for tenant registrations: a point set to `closed` here is closed whatever the tenant
   * asked for. A map for every tenant, or a function of the tenant id.
   */
  floor: z
    .union([PolicyMapSchema, fn<(tenantId: TenantId) => PolicyMap | undefined>("floor")], {
      error: "Expected `floor` to be a map of hook point to `closed` or `open`, or a function of the tenant id",
    })
    .optional(),
});

export type DispatcherOptionsInput = z.input<typeof DispatcherOptions>;
export type ResolvedDispatcherOptions = z.output<typeof DispatcherOptions>;

export const PolicyMapInput = PolicyMapSchema;

/** Validates options with precise messages; throws `DispatchError` (`invalid_options`) listing every problem. */
export function parseDispatcherOptions(input: unknown): ResolvedDispatcherOptions {
  const parsed = DispatcherOptions.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    return issue.message.includes("`") || path === "" ? issue.message : `\`${path}\`: ${issue.message}`;
  });
  throw new DispatchError("invalid_options", `Invalid dispatcher options: ${lines.join("; ")}`);
}
