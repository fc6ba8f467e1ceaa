import { hostname } from "node:os";
import { z } from "zod";
import {
  checkExecutorOptions,
  type ExecutorOptions,
  ExecutorOptionsError,
  type SupervisorEvent,
} from "../../sandbox/supervisor/index.js";
import type { Model } from "../agent/index.js";
import { type LogOptions, parseLogOptions } from "../decisionlog/index.js";
import { type DispatcherOptionsInput, parseDispatcherOptions } from "../dispatch/index.js";
import {
  type BundleSource,
  describeValue,
  type HookExecutor,
  type LimitsInput,
  notify,
  parseLimits,
} from "../protocol/index.js";
import type { BundleStore, CheckpointLedger, DecisionLogStore } from "../store/index.js";
import { type CheckpointKey, checkCheckpointTtl, checkpointKeys } from "./checkpoint.js";
import { RuntimeError } from "./errors.js";
import type { RuntimeEvent } from "./events.js";

/** Options of the executor the runtime starts (and closes): everything `createHookExecutor` takes but the limits, events and signal, which are the runtime's. */
export type RuntimeExecutorOptions = Omit<ExecutorOptions, "limits" | "onEvent" | "signal">;

/** Options of the runtime's dispatcher: budgets, quarantine, the platform's policy floor, the clock. */
export type RuntimeDispatchOptions = Omit<DispatcherOptionsInput, "executor" | "emit" | "limits">;

/**
 * Options of `createHookRuntime`. Every field is checked before anything starts; a wrong one throws a
 * `RuntimeError` (`invalid_options`) naming it, what it must be and what it got.
 *
 * ```ts
 * createHookRuntime({
 *   store: ".isohook/store.db",
 *   limits: { timeoutMs: 50 },
 *   executor: { workers: 4, killGraceMs: 500, maxPendingPerWorker: 1_000 },
 *   dispatch: { budgets: { turnMs: 250, runMs: 5_000 }, floor: { "tool.call": "closed" } },
 * });
 * ```
 */
export interface HookRuntimeOptions {
  /**
   * Your executor (the runtime then does not close it), or the options of the one the runtime starts and
   * closes (`createHookExecutor`: mode, workers, RSS cap and check, kill grace, queue depth, spare).
   * Default: a process executor with default options.
   */
  readonly executor?: HookExecutor | RuntimeExecutorOptions;
  /**
   * Sandbox limits (docs/architecture.md, "Limits"): of the executor the runtime starts, and of the dispatcher's
   * checks.
   */
  readonly limits?: LimitsInput;
  /** The dispatcher: budgets (default 250 / 5000 ms), quarantine, the policy floor, the clock (`Date.now`). */
  readonly dispatch?: RuntimeDispatchOptions;
  /**
   * Where tenants' active bundles come from. Default: the `store`. A run resolves its tenant's bundle once,
   * at its start, and keeps that version.
   */
  readonly bundles?: BundleSource;
  /**
   * A bundle store, or a location to open (then the runtime closes it): the path of a SQLite file, or a
   * `postgres://…` URL for a store shared by many hosts (see `openStore`). A SQLite path with no store file
   * is refused (a mistyped path must not serve every tenant unguarded) unless `createStore`.
   */
  readonly store?: BundleStore | string;
  /**
   * The decision log. On by default when the runtime has a `store`: each tenant whose log an operator
   * switched on (`isohook log --tenant <id> --on`) is recorded there, and no other. `{ all: { sample } }`
   * also records every other tenant; `store` names another store to write to (needed with `bundles`);
   * the rest tunes the writer (buffer, batches, event cap). `false`: off, not even the settings are read.
   */
  readonly decisionLog?: false | (LogOptions & { readonly store?: DecisionLogStore });
  /** When `store` is a path: create an empty store there if there is none. Default false. */
  readonly createStore?: boolean;
  /** The model `runAgent` uses when a run names none. */
  readonly model?: Model;
  /** Every dispatcher event (one per hook call, quarantine changes) and worker lifecycle events. */
  readonly onEvent?: (event: RuntimeEvent) => void;
  /** Aborts start-up (opening the store, starting the sandbox workers). */
  readonly signal?: AbortSignal;
  /**
   * The key that seals and checks checkpoints (HMAC-SHA256): at least 16 bytes, 32 random bytes
   * recommended; keep it secret and the same on every host that resumes runs. Without it (here or per
   * run), a run that pauses for approval, or a resume, is a `no_checkpoint_key` error.
   */
  readonly checkpointKey?: CheckpointKey;
  /** How long a sealed checkpoint can be resumed (`checkpoint_expired` after): default 7 days. */
  readonly checkpointTtlMs?: number;
  /**
   * Where resumed checkpoints are recorded so that each resumes once on every runtime sharing it; default:
   * the `store`'s ledger (with `bundles` and no store, ids are remembered by this runtime only).
   */
  readonly checkpoints?: CheckpointLedger;
  /**
   * Quarantine shared through the `store` with every host on it (default true when there is a store): a
   * bundle whose failures on any mix of hosts reach the threshold is quarantined on all of them, and
   * `isohook quarantine release` lifts it everywhere. False: this runtime's book is its own.
   */
  readonly sharedQuarantine?: boolean;
  /** This host's name in the shared quarantine book (`isohook quarantine list`): default `<hostname>:<pid>`. */
  readonly host?: string;
}

const objectWith = (name: string, methods: string[], what: string) =>
  z.custom<object>(
    (v) =>
      typeof v === "object" &&
      v !== null &&
      methods.every((m) => typeof (v as Record<string, unknown>)[m] === "function"),
    { error: (issue) => `Expected \`${name}\` to be ${what}, got \`${describeValue(issue.input)}\`` },
  );

const anObject = (name: string, what: string) =>
  z.custom<object>((v) => typeof v === "object" && v !== null && !Array.isArray(v), {
    error: (issue) => `Expected \`${name}\` to be ${what}, got \`${describeValue(issue.input)}\``,
  });

const Schema = z.strictObject({
  executor: anObject("executor", "a HookExecutor or executor options").optional(),
  limits: z.unknown().optional(),
  dispatch: anObject("dispatch", "an object of dispatcher options").optional(),
  bundles: objectWith("bundles", ["active"], "a BundleSource (an object with `active(tenantId)`)").optional(),
  store: z
    .union([z.string().min(1), objectWith("store", ["active", "upload", "close"], "a BundleStore")], {
      error: (issue) =>
        `Expected \`store\` to be a BundleStore or the path of a store file, got \`${describeValue(issue.input)}\``,
    })
    .optional(),
  decisionLog: z
    .union([z.literal(false), anObject("decisionLog", "false or decision-log options")], {
      error: (issue) =>
        `Expected \`decisionLog\` to be false or decision-log options, got \`${describeValue(issue.input)}\``,
    })
    .optional(),
  createStore: z
    .boolean({ error: (issue) => `Expected \`createStore\` to be a boolean, got \`${describeValue(issue.input)}\`` })
    .optional(),
  model: objectWith("model", ["complete"], "a Model (an object with `id` and `complete`)").optional(),
  onEvent: z
    .custom<(event: RuntimeEvent) => void>((v) => typeof v === "function", {
      error: (issue) => `Expected \`onEvent\` to be a function, got \`${describeValue(issue.input)}\``,
    })
    .optional(),
  checkpointKey: z.unknown().optional(),
  checkpointTtlMs: z.unknown().optional(),
  sharedQuarantine: z
    .boolean({ error: (i) => `Expected \`sharedQuarantine\` to be a boolean, got \`${describeValue(i.input)}\`` })
    .optional(),
  host: z
    .string()
    .regex(/^[^\p{Cc}]{1,128}$/u, "Expected `host` to be a name of 1–128 printable characters")
    .optional(),
  checkpoints: objectWith("checkpoints", ["claim"], "a CheckpointLedger (an object with `claim`)").optional(),
  signal: z
    .custom<AbortSignal>((v) => v instanceof AbortSignal, {
      error: (issue) => `Expected \`signal\` to be an AbortSignal, got \`${describeValue(issue.input)}\``,
    })
    .optional(),
});

/** Whether `executor` is an executor (rather than options for one). */
export function isExecutor(executor: HookRuntimeOptions["executor"]): executor is HookExecutor {
  return typeof (executor as { execute?: unknown } | undefined)?.execute === "function";
}

/** A stand-in so the dispatcher's own checks (budgets, quarantine, floor) run before any worker starts. */
const PROBE_EXECUTOR: HookExecutor = {
  mode: "inline",
  execute: () => Promise.reject(new Error("probe")),
  describe: () => Promise.reject(new Error("probe")),
  close: () => Promise.resolve(),
};

const invalid = (message: string) => new RuntimeError("invalid_options", message);

/** Checks every option; throws `RuntimeError` `invalid_options`. */
export function checkRuntimeOptions(options: HookRuntimeOptions): void {
  if (typeof options !== "object" || options === null) {
    throw invalid(`Expected runtime options to be an object, got \`${describeValue(options)}\``);
  }
  const parsed = Schema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(
      issue?.code === "unrecognized_keys"
        ? `Unknown option \`${issue.keys[0]}\`. Known options: ${Object.keys(Schema.shape).join(", ")}`
        : (issue?.message ?? "invalid options"),
    );
  }
  if (options.bundles !== undefined && options.store !== undefined) {
    throw invalid("Pass `bundles` or `store`, not both: the store is a bundle source already");
  }
  if (options.limits !== undefined) parseLimits(options.limits, invalid);
  checkLogOption(options);

  if (options.checkpointKey !== undefined) checkpointKeys(options.checkpointKey);
  if (options.checkpointTtlMs !== undefined) checkCheckpointTtl(options.checkpointTtlMs, "checkpointTtlMs");
  const { executor } = options;
  if (executor !== undefined && !isExecutor(executor)) {
    if ("limits" in executor)
      throw invalid("Set `limits` at the top level: they apply to the executor and the dispatcher");
    try {
      checkExecutorOptions(executor);
    } catch (error) {
      if (error instanceof ExecutorOptionsError) throw invalid(`In \`executor\`: ${error.message}`);
      throw error;
    }
  }
  try {
    parseDispatcherOptions(dispatcherOptions(options, PROBE_EXECUTOR));
  } catch (error) {
    const message = error instanceof Error ? error.message.replace(/^Invalid dispatcher options: /, "") : String(error);
    throw invalid(`In \`dispatch\`: ${message}`);
  }
}

function checkLogOption(options: HookRuntimeOptions): void {
  const log = options.decisionLog;
  if (log === undefined || log === false) return;
  if (options.dispatch?.decisionLog !== undefined)
    throw invalid("Pass `decisionLog` or `dispatch.decisionLog` (your own sink), not both");
  const { store, ...rest } = log;
  if (store !== undefined && typeof (store as { appendDecisions?: unknown }).appendDecisions !== "function")
    throw invalid("Expected `decisionLog.store` to be a store (a BundleStore or a DecisionLogStore)");
  try {
    parseLogOptions(rest);
  } catch (error) {
    throw invalid(error instanceof Error ? error.message : String(error));
  }
}

/**
 * The options of the executor the runtime starts: its own, the shared limits, the runtime's events (and
 * `observe`, the runtime's own listener for metrics) and signal.
 */
export function executorOptions(
  options: HookRuntimeOptions,
  observe?: (event: SupervisorEvent) => void,
): ExecutorOptions {
  const own = isExecutor(options.executor) ? {} : (options.executor ?? {});
  const { limits, onEvent, signal } = options;
  const listener =
    observe === undefined
      ? onEvent
      : (event: SupervisorEvent) => {
          observe(event);
          notify(onEvent, event);
        };
  return {
    ...own,
    ...(limits !== undefined ? { limits } : {}),
    ...(listener !== undefined ? { onEvent: listener } : {}),
    ...(signal !== undefined ? { signal } : {}),
  };
}

/** The dispatcher's options: its own, the shared limits, the executor, and the store's shared quarantine. */
export function dispatcherOptions(
  options: HookRuntimeOptions,
  executor: HookExecutor,
  store?: BundleStore,
): DispatcherOptionsInput {
  const { limits } = options;
  const shared = store !== undefined && options.sharedQuarantine !== false && options.dispatch?.fleet === undefined;
  const fleet = shared
    ? { fleet: { ledger: store.quarantine, host: options.host ?? `${hostname()}:${process.pid}` } }
    : {};
  return { ...options.dispatch, executor, ...(limits !== undefined ? { limits } : {}), ...fleet };
}
