import { randomUUID } from "node:crypto";
import {
  type AgentLoopOptions,
  type AgentLoopResult,
  type ApprovalDecisions,
  DEFAULT_MAX_TURNS,
  type Model,
  type PausedRun,
  type PendingApproval,
  resumeAgentLoop,
  runAgentLoop,
  type Tool,
} from "../agent/index.js";
import type { DispatchEvent, Dispatcher, PolicyMap, RunDispatcher } from "../dispatch/index.js";
import type { BundleRef, BundleSource, JsonValue, Message, ModelSettings } from "../protocol/index.js";
import { notify, RunId, type TenantId } from "../protocol/index.js";
import type { CheckpointLedger } from "../store/index.js";
import { checkDecisions, ResumeOnce } from "./approvals.js";
import { bundleAt, withShadowNow } from "./bundle-version.js";
import {
  type Checkpoint,
  type CheckpointBody,
  type CheckpointKey,
  checkCheckpointTtl,
  checkpointKeys,
  openCheckpoint,
  sealCheckpoint,
} from "./checkpoint.js";
import { RuntimeError } from "./errors.js";
import type { RunEvent, RunWarning } from "./events.js";
import { type HookRun, type OpenHookRunOptions, openHookRun, startRun, tenantOf } from "./hook-run.js";
import type { HookRuntimeOptions } from "./options.js";
import { checkRun, loopFields } from "./run-options.js";

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
  /** Messages from outside while the run runs (`Inbox`): delivered at each turn boundary. */
  readonly inbox?: AgentLoopOptions["inbox"];
  /** How streamed output is coalesced for `model.stream` hooks (default 100 ms or 400 characters). */
  readonly streamWindow?: AgentLoopOptions["streamWindow"];
  /** Default: a fresh `run_<uuid>`. */
  readonly runId?: string;
  /** The failure policy the tenant asked for, per point (the platform floor may raise it to `closed`). */
  readonly policy?: PolicyMap;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: RunEvent) => void;
  /** Seals this run's checkpoint if it pauses for approval; default: the runtime's `checkpointKey`. */
  readonly checkpointKey?: CheckpointKey;
  /** The host's own JSON, sealed into the checkpoint (`readCheckpoint(…).meta`), e.g. which session asked. */
  readonly checkpointMeta?: JsonValue;
  /** How long this run's checkpoint can be resumed; default: the runtime's `checkpointTtlMs` (7 days). */
  readonly checkpointTtlMs?: number;
  /**
   * Answers asks in-process, the way a human would: called with the pending calls when the run pauses;
   * decisions continue the run at once (no checkpoint), undefined ends it with a checkpoint.
   */
  readonly approve?: (
    pending: readonly PendingApproval[],
    signal: AbortSignal,
  ) => ApprovalDecisions | undefined | Promise<ApprovalDecisions | undefined>;
}

/** What a resume takes from its checkpoint instead of its options. */
type ResumeOwn = "tenantId" | "input" | "system" | "settings" | "maxTurns" | "parallelToolCalls" | "runId" | "policy";

/** What `resumeAgent` takes besides the checkpoint: the decisions, and the live parts a checkpoint cannot hold. */
export interface ResumeAgentOptions extends Omit<RunAgentOptions, ResumeOwn> {
  /** The tenant resuming: a checkpoint of another tenant is refused (`checkpoint_foreign`). */
  readonly tenantId: string;
  /** One decision per pending call, by call id. */
  readonly decisions: ApprovalDecisions;
}

export interface RunAgentResult extends Omit<AgentLoopResult, "paused"> {
  readonly runId: RunId;
  readonly tenantId: TenantId;
  /**
   * The bundle version that decided the run from start to end (a rollout's candidate for the runs in its
   * share, else the active version); undefined when the tenant had none.
   */
  readonly bundle: BundleRef | undefined;
  /** What the platform should notice, e.g. `no_active_bundle`: the tenant's hooks did not guard this run. */
  readonly warnings: readonly RunWarning[];
  /** When `stopReason` is `approval`: the sealed run, for `resumeAgent`. */
  readonly checkpoint?: Checkpoint;
}

/** What the runtime lends its agent sessions. */
export interface SessionContext {
  /** The runtime's options, read when a run starts: its default `model` and `checkpointKey`. */
  readonly options: Pick<HookRuntimeOptions, "model" | "checkpointKey" | "checkpointTtlMs">;
  /** Where resumed checkpoints are recorded for every runtime on the store (none: this runtime only). */
  readonly checkpoints: CheckpointLedger | undefined;
  readonly dispatcher: Dispatcher;
  readonly bundles: BundleSource | undefined;
  /** The dispatcher's events for each run in flight, by run id (the runtime's `emit` routes to them). */
  readonly listeners: Map<string, (event: DispatchEvent) => void>;
}

/** The runtime's agent sessions: started, resumed from a checkpoint, and aborted when it closes. */
export interface AgentSessions {
  /** A run driven from outside isohook's loop, hook point by hook point (`HookRuntime.openRun`). */
  openRun(options: OpenHookRunOptions): Promise<HookRun>;
  runAgent(options: RunAgentOptions): Promise<RunAgentResult>;
  resumeAgent(checkpoint: Checkpoint, options: ResumeAgentOptions): Promise<RunAgentResult>;
  readonly closed: boolean;
  /** Refuses new sessions, aborts those in flight and waits for them to end. */
  close(): Promise<void>;
}

/**
 * Runs and resumes agent sessions over the runtime's dispatcher: each session has its run's signal, its
 * events, approvals in-process, and a sealed checkpoint when it pauses for approval.
 */
export function createAgentSessions(context: SessionContext): AgentSessions {
  const { options, dispatcher, bundles, listeners, checkpoints } = context;
  const inFlight = new Set<{ controller: AbortController; done: Promise<unknown> }>();
  const once = new ResumeOnce(checkpoints);
  let closed = false;

  /** What both entries share: the run's signal, its events, the in-flight set, approvals and the checkpoint. */
  async function session(
    run: Pick<
      RunAgentOptions,
      "signal" | "onEvent" | "checkpointKey" | "checkpointMeta" | "checkpointTtlMs" | "approve" | "model"
    >,
    tenantId: TenantId,
    runId: RunId,
    start: (signal: AbortSignal, forward: (event: RunEvent) => void) => Promise<Session>,
  ): Promise<RunAgentResult> {
    const controller = new AbortController();
    const onAbort = () => controller.abort(run.signal?.reason);
    if (run.signal?.aborted) onAbort();
    else run.signal?.addEventListener("abort", onAbort, { once: true });
    const entry = { controller, done: Promise.resolve() as Promise<unknown> };
    inFlight.add(entry);
    const forward = (event: RunEvent) => notify(run.onEvent, event);
    listeners.set(runId, (event) => {
      if (event.type === "hook.called" || event.type === "hook.shadowed" || event.tenantId === tenantId) forward(event);
    });
    let hooks: RunDispatcher | undefined;
    try {
      const s = await start(controller.signal, forward);
      hooks = s.loop.hooks;
      const done = settle(s, run);
      entry.done = done;
      return await done;
    } finally {
      // The run's observe-only calls may still be running: their records go to its `onEvent` until they end.
      if (hooks === undefined) listeners.delete(runId);
      else void hooks.observed().then(() => listeners.delete(runId));
      inFlight.delete(entry);
      run.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Seals a checkpoint when the run paused for approval. */
  async function settle(s: Session, run: Parameters<typeof session>[0]): Promise<RunAgentResult> {
    const result = await s.result;
    const { paused, ...rest } = result;
    const base = { ...rest, runId: s.runId, tenantId: s.tenantId, bundle: s.bundle, warnings: s.warnings };
    if (paused === undefined) return base;
    // No run.end until the resumed run ends: the paused run's spans end here, so none is left open.
    s.loop.hooks.pause({ stopReason: "approval", turns: rest.turns, usage: rest.usage });
    const key = run.checkpointKey ?? options.checkpointKey;
    if (key === undefined) {
      throw new RuntimeError(
        "no_checkpoint_key",
        `A hook asked for approval of ${paused.batch.pending.length} tool call(s), and there is no checkpoint key to seal the paused run with (the run stopped at the ask: no tool ran after it): pass \`checkpointKey\` to createHookRuntime or runAgent (or \`approve\` to answer in-process)`,
      );
    }
    const checkpoint = sealCheckpoint(
      {
        tenantId: s.tenantId,
        runId: s.runId,
        bundle: s.bundle,
        policy: s.policy,
        options: s.options,
        loop: paused,
        hooks: s.loop.hooks.snapshot(),
        meta: run.checkpointMeta ?? null,
        ...ttlOf(run),
      },
      key,
    );
    return { ...base, checkpoint };
  }

  function ttlOf(run: { readonly checkpointTtlMs?: number | undefined }): { ttlMs?: number } {
    const ttlMs = run.checkpointTtlMs ?? options.checkpointTtlMs;
    return ttlMs === undefined ? {} : { ttlMs };
  }

  function modelOf(run: { readonly model?: Model | undefined }): Model {
    const model = run.model ?? options.model;
    if (!model)
      throw new RuntimeError(
        "no_model",
        "No model: pass `model` to runAgent or createHookRuntime (scriptedModel or openAIModel)",
      );
    return model;
  }

  function open(): void {
    if (closed)
      throw new RuntimeError("closed", "The hook runtime is closed; create a new one with createHookRuntime()");
  }

  async function runAgent(run: RunAgentOptions): Promise<RunAgentResult> {
    open();
    const tenantId = tenantOf(run.tenantId);
    const model = modelOf(run);
    checkRun(run);
    if (run.checkpointKey !== undefined) checkpointKeys(run.checkpointKey);
    if (run.checkpointTtlMs !== undefined) checkCheckpointTtl(run.checkpointTtlMs, "checkpointTtlMs");
    const runId = RunId.parse(run.runId ?? `run_${randomUUID()}`);
    return session(run, tenantId, runId, async (signal, forward) => {
      const { hooks, warnings } = await startRun(context, { tenantId, runId, policy: run.policy }, signal, forward);
      const approve = run.approve === undefined ? {} : { approve: run.approve };
      // Without a key a pause cannot be sealed: the loop then stops at the first ask, running no further tool.
      const canPause = (run.checkpointKey ?? options.checkpointKey) !== undefined;
      const loop = { ...loopFields(run), ...approve, canPause, hooks, model, signal, onEvent: forward };
      const settings = run.settings ?? {};
      const sessionOptions = {
        maxTurns: run.maxTurns ?? DEFAULT_MAX_TURNS,
        parallelToolCalls: run.parallelToolCalls === true,
        settings,
      };
      return {
        tenantId,
        runId,
        // The version that decides: a rollout's candidate for the runs in its share, else the active one.
        bundle: hooks.bundle,
        warnings,
        policy: run.policy ?? {},
        options: sessionOptions,
        loop,
        result: runAgentLoop(loop),
      };
    });
  }

  async function resumeAgent(checkpoint: Checkpoint, run: ResumeAgentOptions): Promise<RunAgentResult> {
    open();
    const key = run.checkpointKey ?? options.checkpointKey;
    if (key === undefined) {
      throw new RuntimeError(
        "no_checkpoint_key",
        "Resuming a checkpoint needs the key that sealed it: pass `checkpointKey` to createHookRuntime or resumeAgent",
      );
    }
    const body = openCheckpoint(checkpoint, key);
    if (body.tenantId !== run.tenantId) {
      throw new RuntimeError(
        "checkpoint_foreign",
        `This checkpoint belongs to another tenant than ${JSON.stringify(run.tenantId)}; a tenant resumes only its own runs`,
      );
    }
    const model = modelOf(run);
    checkRun(run);
    const loopState: PausedRun = body.loop;
    checkDecisions(loopState, run.decisions, run.tools ?? []);
    once.check(body, Date.now());
    const { tenantId, runId } = body;
    return session(run, tenantId, runId, async (signal, forward) => {
      const ref = body.bundle ?? undefined;
      const pinned = ref === undefined ? undefined : await bundleAt(bundles, tenantId, ref, signal);
      const bundle = pinned === undefined ? undefined : await withShadowNow(bundles, pinned, signal);
      await once.claim(body, signal);
      const hooks = dispatcher.openRun({ tenantId, runId, bundle, policy: body.policy, resume: body.hooks });
      const shadow = hooks.shadow === undefined ? {} : { shadow: hooks.shadow };
      forward({ type: "run.started", runId, tenantId, bundle: ref, resumed: true, ...shadow });
      const { maxTurns, parallelToolCalls, settings } = body.options;
      const loop: AgentLoopOptions = {
        input: [],
        ...(run.tools !== undefined ? { tools: run.tools } : {}),
        ...(run.steering !== undefined ? { steering: run.steering } : {}),
        ...(run.followUp !== undefined ? { followUp: run.followUp } : {}),
        ...(run.inbox !== undefined ? { inbox: run.inbox } : {}),
        ...(run.streamWindow !== undefined ? { streamWindow: run.streamWindow } : {}),
        ...(run.approve !== undefined ? { approve: run.approve } : {}),
        settings,
        maxTurns,
        parallelToolCalls,
        hooks,
        model,
        signal,
        onEvent: forward,
      };
      return {
        tenantId,
        runId,
        bundle: ref,
        warnings: [],
        policy: body.policy,
        options: body.options,
        loop,
        result: resumeAgentLoop(loop, loopState, run.decisions),
      };
    });
  }

  return {
    async openRun(run) {
      open();
      return openHookRun(context, run);
    },
    runAgent,
    resumeAgent,
    get closed() {
      return closed;
    },
    async close() {
      closed = true;
      const running = [...inFlight];
      for (const run of running) run.controller.abort(new RuntimeError("closed", "The hook runtime is closing"));
      await Promise.allSettled(running.map((r) => r.done));
    },
  };
}

/** A run in progress, with what its checkpoint would need. */
interface Session {
  readonly tenantId: TenantId;
  readonly runId: RunId;
  readonly bundle: BundleRef | undefined;
  readonly warnings: readonly RunWarning[];
  readonly policy: Readonly<Record<string, "closed" | "open">>;
  readonly options: CheckpointBody["options"];
  readonly loop: AgentLoopOptions;
  readonly result: Promise<AgentLoopResult>;
}
