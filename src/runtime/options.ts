import { z } from "zod";
import type { Model } from "../agent/index.js";
import type { PolicyMap } from "../dispatch/index.js";
import { parseDispatcherOptions } from "../dispatch/index.js";
import { type BundleSource, type HookExecutor, Limits, type LimitsInput, type TenantId } from "../protocol/index.js";
import type { BundleStore } from "../store/index.js";
import { RuntimeError } from "./errors.js";
import type { RuntimeEvent } from "./events.js";

/**
 * Options of `createHookRuntime`. Every field is checked before anything starts; a wrong one throws a
 * `RuntimeError` (`invalid_options`) naming it, what it must be and what it got.
 */
export interface HookRuntimeOptions {
  /** Bring your own executor (the runtime then does not close it). Default: `createHookExecutor` from the options below. */
  readonly executor?: HookExecutor;
  /** `process` (default): isolates in supervised worker processes; `inline` is for tests and benchmarks only. */
  readonly mode?: "process" | "inline";
  /** Sandbox worker processes; default the CPU count. */
  readonly workers?: number;
  /** Sandbox limits (DESIGN §5), for the executor and the dispatcher's checks. */
  readonly limits?: LimitsInput;
  /** A worker above this resident size is recycled. Default 1024. */
  readonly rssCapMb?: number;
  /** Keep a booted spare worker. Default true. */
  readonly spareWorker?: boolean;
  /**
   * Where tenants' active bundles come from. Default: the `store`. A run resolves its tenant's bundle once,
   * at its start, and keeps that version.
   */
  readonly bundles?: BundleSource;
  /**
   * A bundle store, or the path of a SQLite store file to open (then the runtime closes it). A path with no
   * store file is refused (a mistyped path must not serve every tenant unguarded) unless `createStore`.
   */
  readonly store?: BundleStore | string;
  /** When `store` is a path: create an empty store there if there is none. Default false. */
  readonly createStore?: boolean;
  /** The model `runAgent` uses when a run names none. */
  readonly model?: Model;
  /** Hook time per turn and per run (ms); default 250 / 5000. */
  readonly budgets?: { readonly turnMs?: number | undefined; readonly runMs?: number | undefined };
  /** Quarantine of failing (tenant, bundle) pairs; default 5 failures in 60 s → 30 s, doubling. */
  readonly quarantine?: {
    readonly failures?: number;
    readonly windowMs?: number;
    readonly cooldownMs?: number;
    readonly maxCooldownMs?: number;
    readonly forgetAfterMs?: number;
  };
  /** The platform's failure-policy floor for tenant hooks: a point set to `closed` stays closed. */
  readonly floor?: PolicyMap | ((tenantId: TenantId) => PolicyMap | undefined);
  /** Every dispatcher event (one per hook call, quarantine changes) and worker lifecycle events. */
  readonly onEvent?: (event: RuntimeEvent) => void;
  /** Milliseconds since the epoch, for quarantine and event times. Default `Date.now`. */
  readonly clock?: () => number;
  /** Aborts start-up (opening the store, starting the sandbox workers). */
  readonly signal?: AbortSignal;
}

const EXECUTOR_FIELDS = ["mode", "workers", "limits", "rssCapMb", "spareWorker"] as const;

const objectWith = (name: string, methods: string[], what: string) =>
  z.custom<object>(
    (v) =>
      typeof v === "object" &&
      v !== null &&
      methods.every((m) => typeof (v as Record<string, unknown>)[m] === "function"),
    { error: (issue) => `Expected \`${name}\` to be ${what}, got \`${show(issue.input)}\`` },
  );

function positiveInteger(name: string) {
  return z.custom<number>((v) => typeof v === "number" && Number.isInteger(v) && v >= 1, {
    error: (issue) => `Expected \`${name}\` to be an integer from 1 and up, got \`${show(issue.input)}\``,
  });
}

const Schema = z.strictObject({
  executor: objectWith("executor", ["execute", "describe", "close"], "a HookExecutor").optional(),
  mode: z
    .enum(["process", "inline"], {
      error: (issue) => `Expected \`mode\` to be "process" or "inline", got \`${show(issue.input)}\``,
    })
    .optional(),
  workers: positiveInteger("workers").optional(),
  limits: z.unknown().optional(),
  rssCapMb: positiveInteger("rssCapMb").optional(),
  spareWorker: z
    .boolean({ error: (issue) => `Expected \`spareWorker\` to be a boolean, got \`${show(issue.input)}\`` })
    .optional(),
  bundles: objectWith("bundles", ["active"], "a BundleSource (an object with `active(tenantId)`)").optional(),
  store: z
    .union([z.string().min(1), objectWith("store", ["active", "upload", "close"], "a BundleStore")], {
      error: (issue) =>
        `Expected \`store\` to be a BundleStore or the path of a store file, got \`${show(issue.input)}\``,
    })
    .optional(),
  createStore: z
    .boolean({ error: (issue) => `Expected \`createStore\` to be a boolean, got \`${show(issue.input)}\`` })
    .optional(),
  model: objectWith("model", ["complete"], "a Model (an object with `id` and `complete`)").optional(),
  budgets: z.unknown().optional(),
  quarantine: z.unknown().optional(),
  floor: z.unknown().optional(),
  onEvent: z
    .custom<(event: RuntimeEvent) => void>((v) => typeof v === "function", {
      error: (issue) => `Expected \`onEvent\` to be a function, got \`${show(issue.input)}\``,
    })
    .optional(),
  signal: z
    .custom<AbortSignal>((v) => v instanceof AbortSignal, {
      error: (issue) => `Expected \`signal\` to be an AbortSignal, got \`${show(issue.input)}\``,
    })
    .optional(),
  clock: z
    .custom<() => number>((v) => typeof v === "function", {
      error: (issue) => `Expected \`clock\` to be a function, got \`${show(issue.input)}\``,
    })
    .optional(),
});

/** A stand-in so the dispatcher's own checks (budgets, quarantine, floor) run before any worker starts. */
const PROBE_EXECUTOR: HookExecutor = {
  mode: "inline",
  execute: () => Promise.reject(new Error("probe")),
  describe: () => Promise.reject(new Error("probe")),
  close: () => Promise.resolve(),
};

/** Checks every option; throws `RuntimeError` `invalid_options`. */
export function checkRuntimeOptions(options: HookRuntimeOptions): void {
  if (typeof options !== "object" || options === null) {
    throw new RuntimeError("invalid_options", `Expected runtime options to be an object, got \`${show(options)}\``);
  }
  const parsed = Schema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const message =
      issue?.code === "unrecognized_keys"
        ? `Unknown option \`${issue.keys[0]}\`. Known options: ${Object.keys(Schema.shape).join(", ")}`
        : (issue?.message ?? "invalid options");
    throw new RuntimeError("invalid_options", message);
  }
  if (options.executor !== undefined) {
    const stray = EXECUTOR_FIELDS.find((key) => options[key] !== undefined && key !== "limits");
    if (stray !== undefined) {
      throw new RuntimeError(
        "invalid_options",
        `\`${stray}\` configures the runtime's own executor; remove it or remove \`executor\``,
      );
    }
  }
  if (options.bundles !== undefined && options.store !== undefined) {
    throw new RuntimeError(
      "invalid_options",
      "Pass `bundles` or `store`, not both: the store is a bundle source already",
    );
  }
  if (options.limits !== undefined) {
    const limits = Limits.safeParse(options.limits);
    if (!limits.success) {
      const issue = limits.error.issues[0];
      const path = issue && issue.path.length > 0 ? `.${issue.path.map(String).join(".")}` : "";
      throw new RuntimeError(
        "invalid_options",
        `Invalid \`limits${path}\`: ${issue?.message ?? "not a limits object"}`,
      );
    }
  }
  try {
    parseDispatcherOptions(dispatcherFields(options, PROBE_EXECUTOR));
  } catch (error) {
    throw new RuntimeError(
      "invalid_options",
      error instanceof Error ? error.message.replace(/^Invalid dispatcher options: /, "") : String(error),
    );
  }
}

/** The dispatcher's share of the options. */
export function dispatcherFields(options: HookRuntimeOptions, executor: HookExecutor) {
  return {
    executor,
    ...(options.limits !== undefined ? { limits: options.limits } : {}),
    ...(options.budgets !== undefined ? { budgets: options.budgets } : {}),
    ...(options.quarantine !== undefined ? { quarantine: options.quarantine } : {}),
    ...(options.floor !== undefined ? { floor: options.floor } : {}),
    ...(options.clock !== undefined ? { clock: options.clock } : {}),
  };
}

function show(value: unknown): string {
  if (typeof value === "function") return "a function";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value === null || value === undefined)
    return String(value);
  return Array.isArray(value) ? "an array" : "an object";
}
