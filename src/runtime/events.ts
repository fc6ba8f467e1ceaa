import type { SupervisorEvent } from "../../sandbox/supervisor/index.js";
import type { AgentEvent } from "../agent/index.js";
import type { DecisionsDroppedEvent } from "../decisionlog/index.js";
import type {
  DispatchEvent,
  HookCalledEvent,
  HookShadowedEvent,
  QuarantineEnteredEvent,
  QuarantineExitedEvent,
} from "../dispatch/index.js";
import type { BundleRef, RunId, TenantId } from "../protocol/index.js";
import type { StoreEvent } from "../store/index.js";

/** The first event of every run: which tenant, which bundle version it resolved (and keeps). */
export interface RunStartedEvent {
  readonly type: "run.started";
  readonly runId: RunId;
  readonly tenantId: TenantId;
  /**
   * The tenant bundle that decides this run: the active version, or a rollout's candidate when the run
   * falls in its share; undefined when the tenant has none (platform hooks only).
   */
  readonly bundle: BundleRef | undefined;
  /** Set when the run goes on from a checkpoint (`resumeAgent`). */
  readonly resumed?: true;
  /** The candidate running in shadow mode beside it, when the tenant has one. */
  readonly shadow?: BundleRef;
}

/** Something the platform should notice about a run that still goes on, e.g. no tenant bundle guards it. */
export interface RunWarning {
  readonly code: "no_active_bundle";
  readonly message: string;
}

/** Emitted right after `run.started` for each of the run's warnings (also in the run's result). */
export interface RunWarningEvent extends RunWarning {
  readonly type: "run.warning";
  readonly runId: RunId;
  readonly tenantId: TenantId;
}

/**
 * What one run reports to its `onEvent`, in order: `run.started`, the loop's events (`hooks.decided`
 * carries each point's decision with the hook calls behind it), one `hook.called` per hook call, one
 * `hook.shadowed` per call of a candidate in shadow mode, and the
 * quarantine changes of its tenant's bundle; `run.finished` last.
 */
export type RunEvent =
  | RunStartedEvent
  | RunWarningEvent
  | AgentEvent
  | HookCalledEvent
  | HookShadowedEvent
  | QuarantineEnteredEvent
  | QuarantineExitedEvent;

/**
 * What the runtime reports to its own `onEvent`: every dispatcher event, the sandbox workers' lifecycle,
 * and the reachability of a store the runtime opened from a location (`store.unreachable`, `store.reachable`).
 */
export type RuntimeEvent = DispatchEvent | SupervisorEvent | StoreEvent | DecisionsDroppedEvent;
