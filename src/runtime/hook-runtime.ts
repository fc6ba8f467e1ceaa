import { randomUUID } from "node:crypto";
import { createHookExecutor, ExecutorOptionsError } from "../../sandbox/supervisor/index.js";
import { type AgentLoopOptions, type AgentRunResult, type Model, runAgentLoop, type Tool } from "../agent/index.js";
import { DecisionLog } from "../decisionlog/index.js";
import { createDispatcher, type DispatchEvent, type PlatformHooks, type PolicyMap } from "../dispatch/index.js";
import type { BundleRef, BundleSource, HookExecutor, Message, ModelSettings } from "../protocol/index.js";
import { notify, RunId, TenantId } from "../protocol/index.js";
import { type BundleStore, openStore, StoreError, storeLocation } from "../store/index.js";
import { RuntimeError } from "./errors.js";
import type { RunEvent, RunWarning } from "./events.js";
import {
  checkRuntimeOptions,
  dispatcherOptions,
  executorOptions,
  type HookRuntimeOptions,
  isExecutor,
} from "./options.js";

export interface RunAgentOptions {
  readonly tenantId: string;
  /** A user prompt or messages. */
  readonly input: string | readonly Message[];
  readonly tools?: readonly Tool[];
  /** Default: the runtime's `model`. */
  readonly model?: Model;
  readonly system?: string;
  readonly settings?: ModelSettings;
  /** Model calls allowed, retries included. Default 20. */
  readonly maxTurns?: number;
  readonly parallelToolCalls?: boolean;
  readonly steering?: AgentLoopOptions["steering"];
  readonly followUp?: AgentLoopOptions["followUp"];
  /** Default: a fresh `run_<uuid>`. */
  readonly runId?: string;
  /** The failure policy the tenant asked for, per point (the platform floor may raise it to `closed`). */
  readonly policy?: PolicyMap;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: RunEvent) => void;
}

export interface RunAgentResult extends AgentRunResult {
  readonly runId: RunId;
  readonly tenantId: TenantId;
  /**
   * The bundle version that decided the run from start to end (a rollout's candidate for the runs in its
   * share, else the active version); undefined when the tenant had none.
   */
  readonly bundle: BundleRef | undefined;
  /** What the platform should notice, e.g. `no_active_bundle`: the tenant's hooks did not guard this run. */
  readonly warnings: readonly RunWarning[];
}

export interface HookRuntime {
  /** Runs one agent session for a tenant with its active bundle (resolved once, kept for the run). */
  runAgent(options: RunAgentOptions): Promise<RunAgentResult>;
  /** Adds trusted in-process hooks to every run started from now on; returns their removal. */
  registerPlatformHooks(hooks: PlatformHooks | readonly PlatformHooks[]): () => void;
  /** The store, when the runtime was given one (or opened one from a path). */
  readonly store: BundleStore | undefined;
  readonly executor: HookExecutor;
  /** The decision log the runtime writes (see `decisionLog` in the options); its `stats()` count drops. */
  readonly decisionLog: DecisionLog | undefined;
  /**
   * Aborts runs in flight, waits for them, flushes the decision log, then closes what the runtime opened
   * (executor, store).
   */
  close(): Promise<void>;
}

/**
 * The library entry: a sandbox executor, a dispatcher over it, tenants' bundles from a store or another
 * source, and the agent loop. Options are validated before anything starts (`RuntimeError`).
 *
 * ```ts
 * const runtime = await createHookRuntime({ store: ".isohook/store.db", model: scriptedModel(turns) });
 * runtime.registerPlatformHooks({ id: "platform:audit", position: "last", hooks: { toolCall: audit } });
 * const result = await runtime.runAgent({ tenantId: "acme", input: "Clean up the build folder", tools });
 * console.log(result.stopReason, result.output, result.bundle?.version);
 * await runtime.close();
 * ```
 */
export async function createHookRuntime(options: HookRuntimeOptions = {}): Promise<HookRuntime> {
  checkRuntimeOptions(options);
  options.signal?.throwIfAborted();
  const listeners = new Map<string, (event: DispatchEvent) => void>();
  const emit = (event: DispatchEvent) => {
    notify(options.onEvent, event);
    if (event.type === "hook.called" || event.type === "hook.shadowed") {
      listeners.get(event.runId)?.(event);
      return;
    }
    for (const listener of listeners.values()) listener(event);
  };

  const ownsStore = typeof options.store === "string";
  const store = typeof options.store === "string" ? await openRuntimeStore(options.store, options) : options.store;
  let executor: HookExecutor;
  try {
    executor = isExecutor(options.executor) ? options.executor : await createHookExecutor(executorOptions(options));
  } catch (error) {
    if (ownsStore) await store?.close();
    if (error instanceof ExecutorOptionsError) throw new RuntimeError("invalid_options", error.message);
    throw error;
  }
  let decisionLog: DecisionLog | undefined;
  try {
    decisionLog = await openDecisionLog(options, store);
  } catch (error) {
    if (!isExecutor(options.executor)) await executor.close();
    if (ownsStore) await store?.close();
    throw error;
  }
  const dispatcher = createDispatcher({
    ...dispatcherOptions(options, executor),
    emit,
    ...(decisionLog !== undefined ? { decisionLog } : {}),
  });
  const bundles: BundleSource | undefined = options.bundles ?? store;
  const inFlight = new Set<{ controller: AbortController; done: Promise<unknown> }>();
  let closed = false;

  async function runAgent(run: RunAgentOptions): Promise<RunAgentResult> {
    if (closed)
      throw new RuntimeError("closed", "The hook runtime is closed; create a new one with createHookRuntime()");
    const tenant = TenantId.safeParse(run.tenantId);
    if (!tenant.success) {
      throw new RuntimeError(
        "invalid_run",
        `Expected \`tenantId\` to be a tenant id (lowercase letters, digits, . _ -), got \`${String(run.tenantId)}\``,
      );
    }
    const model = run.model ?? options.model;
    if (!model)
      throw new RuntimeError(
        "no_model",
        "No model: pass `model` to runAgent or createHookRuntime (scriptedModel or openAIModel)",
      );
    checkRun(run);
    const runId = RunId.parse(run.runId ?? `run_${randomUUID()}`);
    const tenantId = tenant.data;
    const controller = new AbortController();
    const onAbort = () => controller.abort(run.signal?.reason);
    if (run.signal?.aborted) onAbort();
    else run.signal?.addEventListener("abort", onAbort, { once: true });
    const entry = { controller, done: Promise.resolve() as Promise<unknown> };
    inFlight.add(entry);
    const forward = (event: RunEvent) => notify(run.onEvent, event);
    try {
      const bundle = await bundles?.active(tenantId, controller.signal);
      const hooks = dispatcher.openRun({ tenantId, runId, bundle, policy: run.policy });
      // The version that decides: a rollout's candidate for the runs in its share, else the active one.
      const ref = hooks.bundle;
      listeners.set(runId, (event) => {
        if (event.type === "hook.called" || event.type === "hook.shadowed" || event.tenantId === tenantId)
          forward(event);
      });
      const shadow = hooks.shadow === undefined ? {} : { shadow: hooks.shadow };
      forward({ type: "run.started", runId, tenantId, bundle: ref, ...shadow });
      const warnings: RunWarning[] = [];
      if (bundle === undefined) warnings.push(noBundleWarning(tenantId, bundles !== undefined));
      for (const warning of warnings) forward({ type: "run.warning", runId, tenantId, ...warning });
      const loop = runAgentLoop({ ...loopFields(run), hooks, model, signal: controller.signal, onEvent: forward });
      entry.done = loop;
      const result = await loop;
      return { ...result, runId, tenantId, bundle: ref, warnings };
    } finally {
      listeners.delete(runId);
      inFlight.delete(entry);
      run.signal?.removeEventListener("abort", onAbort);
    }
  }

  return {
    runAgent,
    registerPlatformHooks: (hooks) => dispatcher.registerPlatformHooks(hooks),
    store,
    executor,
    decisionLog,
    async close() {
      if (closed) return;
      closed = true;
      const running = [...inFlight];
      for (const run of running) run.controller.abort(new RuntimeError("closed", "The hook runtime is closing"));
      await Promise.allSettled(running.map((r) => r.done));
      await decisionLog?.close();
      if (!isExecutor(options.executor)) await executor.close();
      if (ownsStore) await store?.close();
    },
  };
}

/** The runtime's decision log: on its store unless turned off or given another; none without a store. */
async function openDecisionLog(
  options: HookRuntimeOptions,
  store: BundleStore | undefined,
): Promise<DecisionLog | undefined> {
  const chosen = options.decisionLog;
  if (chosen === false || options.dispatch?.decisionLog !== undefined) return undefined;
  const { store: logStore, ...logOptions } = chosen ?? {};
  const target = logStore ?? store;
  if (target === undefined) return undefined;
  return DecisionLog.open(target, logOptions);
}

/** Opens the store at a location; a missing one is refused unless `createStore` (a typo must not run every tenant unguarded). */
async function openRuntimeStore(location: string, options: HookRuntimeOptions): Promise<BundleStore> {
  try {
    return await openStore(location, {
      create: options.createStore === true,
      onEvent: (event) => notify(options.onEvent, event),
    });
  } catch (error) {
    if (!(error instanceof StoreError) || error.code !== "missing") throw error;
    throw new RuntimeError(
      "invalid_options",
      `No store at ${shownLocation(location)}: pass the location of an existing store, \`createStore: true\` to create an empty one, or create it first with \`isohook migrate --store …\``,
    );
  }
}

function shownLocation(location: string): string {
  const parsed = storeLocation(location);
  return parsed.kind === "postgres" ? parsed.display : parsed.path;
}

function noBundleWarning(tenantId: TenantId, hasSource: boolean): RunWarning {
  const why = hasSource
    ? `tenant ${tenantId} has no active bundle`
    : "the runtime has no bundle source (pass `store` or `bundles` to createHookRuntime)";
  return { code: "no_active_bundle", message: `No tenant hooks guard this run: ${why}; only platform hooks run.` };
}

/** The run's own fields that the loop trusts: a wrong one is the caller's mistake, named. */
function checkRun(run: RunAgentOptions): void {
  const { maxTurns, runId, tools } = run;
  if (maxTurns !== undefined && !(Number.isInteger(maxTurns) && maxTurns >= 1)) {
    throw new RuntimeError(
      "invalid_run",
      `Expected \`maxTurns\` to be an integer from 1 and up, got \`${String(maxTurns)}\``,
    );
  }
  if (runId !== undefined && !RunId.safeParse(runId).success) {
    throw new RuntimeError("invalid_run", `Expected \`runId\` to be 1–128 characters, got \`${String(runId)}\``);
  }
  const names = new Set<string>();
  for (const tool of tools ?? []) {
    if (names.has(tool.spec.name)) {
      throw new RuntimeError("invalid_run", `Two tools are named \`${tool.spec.name}\`; give each tool its own name`);
    }
    names.add(tool.spec.name);
  }
}

function loopFields(run: RunAgentOptions): Omit<AgentLoopOptions, "hooks" | "model"> {
  const { input, tools, system, settings, maxTurns, parallelToolCalls, steering, followUp } = run;
  return {
    input,
    ...(tools !== undefined ? { tools } : {}),
    ...(system !== undefined ? { system } : {}),
    ...(settings !== undefined ? { settings } : {}),
    ...(maxTurns !== undefined ? { maxTurns } : {}),
    ...(parallelToolCalls !== undefined ? { parallelToolCalls } : {}),
    ...(steering !== undefined ? { steering } : {}),
    ...(followUp !== undefined ? { followUp } : {}),
  };
}
