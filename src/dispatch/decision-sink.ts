import type { HookPoint, RunId, TenantId } from "../protocol/index.js";
import type { HookRecord } from "./decisions.js";

/**
 * One tenant hook call as the decision log receives it: references to the strings that crossed into the
 * sandbox (built once for the call, never re-serialised or copied for the log) and the call's one
 * `HookRecord`, whose `bundle` says which version decided. `shadow` is a candidate version's record of the
 * same event, when one ran beside it. The rest of the `ctx` the hook saw (tenant, run, hook id, bundle,
 * turn) is in the entry's own fields, so the log keeps only its config and state.
 */
export interface DecisionEntry {
  /** Clock time of the record (ms). */
  readonly at: number;
  readonly tenantId: TenantId;
  readonly runId: RunId;
  readonly turn: number;
  readonly point: HookPoint;
  /** The event as it crossed (`SandboxCall.eventJson`). */
  readonly eventJson: string;
  /** `ctx.config` as it crossed (one string per bundle, shared by its calls). */
  readonly configJson: string;
  /** `ctx.state` as it crossed: the state the hook saw before the call. */
  readonly stateJson: string;
  readonly record: HookRecord;
  readonly shadow?: HookRecord | undefined;
}

/**
 * Where the dispatcher hands its tenant hook calls (`createDispatcher({ decisionLog })`). `sampled` is
 * asked once when a run opens: a run it declines costs one check per call and nothing else. `record` is
 * called synchronously after each tenant hook call of a sampled run: it must not block (queue and return)
 * and must not throw (a throw is ignored; the decision stands either way).
 */
export interface DecisionSink {
  sampled(tenantId: TenantId, runId: RunId): boolean;
  /**
   * Whether the tenant's log is on at all, whatever its sampling: a run the sink did not sample still hands
   * it the calls a candidate in shadow mode ran beside (`shadow` set) when this says so.
   */
  logs?(tenantId: TenantId): boolean;
  record(entry: DecisionEntry): void;
}
