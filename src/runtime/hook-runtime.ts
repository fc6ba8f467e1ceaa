import { createHookExecutor, ExecutorOptionsError, type SupervisorEvent } from "../../sandbox/supervisor/index.js";
import { DecisionLog } from "../decisionlog/index.js";
import { createDispatcher, type DispatchEvent, type PlatformHooks } from "../dispatch/index.js";
import type { BundleSource, HookExecutor } from "../protocol/index.js";
import { notify } from "../protocol/index.js";
import type { BundleStore } from "../store/index.js";
import { SandboxMetrics, type SandboxSource } from "../telemetry/index.js";
import type { Checkpoint } from "./checkpoint.js";
import { RuntimeError } from "./errors.js";
import type { HookRun, OpenHookRunOptions } from "./hook-run.js";
import {
  checkRuntimeOptions,
  dispatcherOptions,
  executorOptions,
  type HookRuntimeOptions,
  isExecutor,
} from "./options.js";
import { openRuntimeStore } from "./runtime-store.js";
import { createAgentSessions, type ResumeAgentOptions, type RunAgentOptions, type RunAgentResult } from "./session.js";

export interface HookRuntime {
  /**
   * Opens a tenant's run for a host that brings its own loop (an MCP gateway, an AI SDK app, another
   * framework's hook callbacks): dispatch each hook point as it comes, end the run when it is over. The
   * tenant's active bundle is resolved once here and kept for the run. Rejects with `RuntimeError`
   * (`invalid_run`) for a bad tenant or run id, and `closed` once the runtime is closing.
   */
  openRun(options: OpenHookRunOptions): Promise<HookRun>;
  /** Runs one agent session for a tenant with its active bundle (resolved once, kept for the run). */
  runAgent(options: RunAgentOptions): Promise<RunAgentResult>;
  /**
   * Continues a run that ended with stop reason `approval`, as if it never stopped: same run id, bundle
   * version (even if another is active now), transcript, turn, hook states and budgets. Rejects with
   * `RuntimeError` before anything runs for a checkpoint that is not intact (`checkpoint_tampered`,
   * `checkpoint_version`, `invalid_checkpoint`), another tenant's (`checkpoint_foreign`), past its expiry
   * (`checkpoint_expired`), resumed already by any runtime on the same store (`checkpoint_replayed`), whose
   * bundle is gone (`checkpoint_bundle`), or decisions that do not answer every pending call
   * (`invalid_decision`); without a key, `no_checkpoint_key`.
   *
   * ```ts
   * const paused = await runtime.runAgent({ tenantId, input, tools });
   * if (paused.stopReason === "approval" && paused.checkpoint) {
   *   const decisions = Object.fromEntries(paused.pending!.map((p) => [p.callId, { type: "approve" }] as const));
   *   await runtime.resumeAgent(paused.checkpoint, { tenantId, decisions, tools });
   * }
   * ```
   */
  resumeAgent(checkpoint: Checkpoint, options: ResumeAgentOptions): Promise<RunAgentResult>;
  /** Adds trusted in-process hooks to every run started from now on; returns their removal. */
  registerPlatformHooks(hooks: PlatformHooks | readonly PlatformHooks[]): () => void;
  /** The store, when the runtime was given one (or opened one from a path). */
  readonly store: BundleStore | undefined;
  readonly executor: HookExecutor;
  /** The decision log the runtime writes (see `decisionLog` in the options); its `stats()` count drops. */
  readonly decisionLog: DecisionLog | undefined;
  /**
   * Resolves once the observe-only calls queued so far have ended (runs never wait for them; their
   * `hook.called` records arrive through `onEvent` meanwhile).
   */
  observersSettled(): Promise<void>;
  /**
   * Takes what your own executor's supervisor reports, when you passed one ready-made (the runtime listens to
   * the executor it starts itself): worker restarts are then counted (`isohook.worker.restarts`) and a worker's
   * death marks the span of the call it failed (`isohook.worker.died`). Other events are ignored.
   *
   * ```ts
   * let runtime: HookRuntime | undefined;
   * const executor = await createHookExecutor({ workers: 4, onEvent: (e) => runtime?.observeSandbox(e) });
   * runtime = await createHookRuntime({ executor, store });
   * ```
   */
  observeSandbox(event: SupervisorEvent): void;
  /**
   * Aborts runs in flight, waits for them, cancels observe-only calls not yet started (and lets go of those
   * running), flushes the decision log, then closes what the runtime opened (executor, store).
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
  let sandboxMetrics: SandboxMetrics | undefined;
  let dispatcherSeen: ((event: SupervisorEvent) => void) | undefined;
  const observeSandbox = (event: SupervisorEvent) => {
    sandboxMetrics?.observe(event);
    dispatcherSeen?.(event);
  };
  try {
    executor = isExecutor(options.executor)
      ? options.executor
      : await createHookExecutor(executorOptions(options, observeSandbox));
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
  sandboxMetrics = SandboxMetrics.start(sandboxSource(executor));
  const dispatcher = createDispatcher({
    ...dispatcherOptions(options, executor, store),
    emit,
    ...(decisionLog !== undefined ? { decisionLog } : {}),
  });
  dispatcherSeen = (event) => dispatcher.observeSandbox(event);
  const bundles: BundleSource | undefined = options.bundles ?? store;
  const checkpoints = options.checkpoints ?? store?.checkpoints;
  const sessions = createAgentSessions({ options, dispatcher, bundles, listeners, checkpoints });

  return {
    openRun: sessions.openRun,
    runAgent: sessions.runAgent,
    resumeAgent: sessions.resumeAgent,
    registerPlatformHooks: (hooks) => dispatcher.registerPlatformHooks(hooks),
    store,
    executor,
    decisionLog,
    observersSettled: () => dispatcher.observersSettled(),
    observeSandbox,
    async close() {
      if (sessions.closed) return;
      await sessions.close();
      await dispatcher.close();
      await decisionLog?.close();
      sandboxMetrics?.close();
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

/** What sandbox metrics can read of an executor: a process executor's workers (pending calls, RSS). */
function sandboxSource(executor: HookExecutor): SandboxSource {
  const withWorkers = executor as HookExecutor & { workers?: SandboxSource["workers"] };
  return typeof withWorkers.workers === "function" ? { workers: () => withWorkers.workers?.() ?? [] } : {};
}
