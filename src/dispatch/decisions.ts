import type {
  AssistantMessage,
  BundleRef,
  Failure,
  FailureCode,
  HookId,
  HookPoint,
  HookResult,
  JsonObject,
  Message,
  SandboxCost,
  ToolChoice,
  ToolResult,
  ToolSpec,
} from "../protocol/index.js";
import type { FailurePolicy, HookSource } from "./registration.js";

/**
 * What the stack of hooks decided at one point, combined by the stacking rules (docs/architecture.md, "Hook points,
 * events and stacking"). The agent loop switches on `decision.type` exhaustively. Every decision that a hook (or a
 * hook's failure under a `closed` policy) made names it in `by`; `by.failure` is set when the decision is a failure's
 * safe one.
 */
export interface DecidedBy {
  readonly hookId: HookId;
  readonly source: HookSource;
  /** Set when a `closed` policy turned this hook's failure into the decision. */
  readonly failure?: FailureCode;
}

/** Ends the run. `stop` exists at every point but `run.end`: it is also the safe decision of a failure. */
export interface StopDecision {
  readonly type: "stop";
  readonly reason: string;
  readonly by: DecidedBy;
}

export type RunStartDecision =
  | { readonly type: "proceed"; readonly input: Message[]; readonly rewritten: boolean }
  | StopDecision;

export type InputInboundDecision =
  | { readonly type: "deliver"; readonly message: Message; readonly rewritten: boolean }
  | { readonly type: "drop"; readonly reason: string; readonly by: DecidedBy }
  | StopDecision;

export type ContextPrepareDecision =
  | { readonly type: "messages"; readonly messages: Message[]; readonly replaced: boolean }
  | StopDecision;

/** `tools` is the event's list filtered to the intersection of every `restrict`, in the event's order. */
export type ToolsPrepareDecision =
  | { readonly type: "tools"; readonly tools: ToolSpec[]; readonly restricted: boolean }
  | StopDecision;

/** The merge of every `patch` in stack order: scalars from the latest patch that set them, `activeTools` intersected. */
export interface ModelRequestPatch {
  readonly model?: string;
  readonly temperature?: number;
  readonly maxTokens?: number;
  readonly toolChoice?: ToolChoice;
  readonly activeTools?: string[];
  readonly system?: string;
}

export type ModelRequestDecision =
  | { readonly type: "request"; readonly patch: ModelRequestPatch; readonly patched: boolean }
  /** Skip the model call and use `message` as its response. `patch` holds what earlier hooks merged. */
  | {
      readonly type: "respond";
      readonly message: AssistantMessage;
      readonly patch: ModelRequestPatch;
      readonly by: DecidedBy;
    }
  | StopDecision;

/** `model.stream`: the stream goes on, or the run stops (the first `stop` in stack order decides). */
export type ModelStreamDecision = { readonly type: "continue" } | StopDecision;

/**
 * `retry` is only ever decided on a turn without tool calls (judged on the effective message after
 * earlier replaces); a hook that asks for it on a tool turn fails with `invalid_result`.
 */
export type ModelResponseDecision =
  | { readonly type: "accept"; readonly message: AssistantMessage; readonly replaced: boolean }
  | { readonly type: "retry"; readonly feedback?: string; readonly by: DecidedBy }
  | StopDecision;

/** `fail` without `by` is the default when no hook decided. */
export type ToolInvalidDecision =
  | { readonly type: "fail"; readonly by?: DecidedBy }
  | { readonly type: "retry"; readonly feedback: string; readonly by: DecidedBy }
  | { readonly type: "repair"; readonly name: string; readonly args?: JsonObject; readonly by: DecidedBy }
  | { readonly type: "skip"; readonly reason: string; readonly by: DecidedBy }
  | StopDecision;

/**
 * `execute` runs the tool with `args` (after every rewrite, each re-validated). `block` gives the model the
 * error tool result `blocked: <reason>` and the run goes on (after the batch if `terminate`); `args` is
 * what earlier hooks had rewritten by then. A `closed` failure blocks with the failure code as reason,
 * never asks. `ask` holds the call for a human with `args` as every hook left them: precedence
 * stop > block > ask > rewrite, so later hooks still run after an ask (and may block or stop the call);
 * the first ask's reason, question and hook decide.
 */
export type ToolCallDecision =
  | { readonly type: "execute"; readonly args: JsonObject; readonly rewritten: boolean }
  | {
      readonly type: "ask";
      readonly reason: string;
      readonly question?: string;
      readonly args: JsonObject;
      readonly rewritten: boolean;
      readonly by: DecidedBy;
    }
  | {
      readonly type: "block";
      readonly reason: string;
      readonly terminate: boolean;
      readonly args: JsonObject;
      readonly by: DecidedBy;
    }
  | StopDecision;

/**
 * `result` is the tool result after every patch, applied field by field; `terminate` as the latest patch
 * that set it left it, and `terminatedBy` names that hook when it is true.
 */
export type ToolResultDecision =
  | {
      readonly type: "result";
      readonly result: ToolResult;
      readonly terminate: boolean;
      readonly terminatedBy?: DecidedBy;
      readonly patched: boolean;
    }
  | StopDecision;

/** Every hook runs; precedence stop > end > continue > default, the first of the winning kind decides. */
export type TurnEndDecision =
  | { readonly type: "default" }
  | { readonly type: "continue"; readonly message?: string; readonly by: DecidedBy }
  | { readonly type: "end"; readonly reason?: string; readonly by: DecidedBy }
  | StopDecision;

/** `accept` without `by` when no hook objected (explicit accepts do not stop later hooks). */
export type OutputValidateDecision =
  | { readonly type: "accept" }
  | { readonly type: "retry"; readonly feedback: string; readonly by: DecidedBy }
  | { readonly type: "fail"; readonly reason: string; readonly by: DecidedBy }
  | StopDecision;

/** `run.end` is observe-only: every hook runs, failures never change anything. */
export type RunEndDecision = { readonly type: "observed" };

export interface PointDecisions {
  "run.start": RunStartDecision;
  "input.inbound": InputInboundDecision;
  "context.prepare": ContextPrepareDecision;
  "tools.prepare": ToolsPrepareDecision;
  "model.request": ModelRequestDecision;
  "model.stream": ModelStreamDecision;
  "model.response": ModelResponseDecision;
  "tool.invalid": ToolInvalidDecision;
  "tool.call": ToolCallDecision;
  "tool.result": ToolResultDecision;
  "turn.end": TurnEndDecision;
  "output.validate": OutputValidateDecision;
  "run.end": RunEndDecision;
}

export type PointDecision<P extends HookPoint> = PointDecisions[P];

/**
 * What one hook call ended in, as kept on the record (state and logs are elsewhere). `skipped` with reason
 * `no match`: the hook exports the point but its tool matcher (`{ tools, handler }`, recorded in the
 * manifest) does not select this call's tool, so nothing crossed into the sandbox (cost fields 0).
 */
export type RecordedOutcome<P extends HookPoint = HookPoint> =
  | { readonly type: "decided"; readonly result: HookResult<P> | null }
  | { readonly type: "failed"; readonly failure: Failure }
  | { readonly type: "skipped"; readonly reason: "no match" };

/**
 * The provenance record of one hook call at one point, in stack order (also the rewrites a later block
 * overrode): who ran (hook, source, bundle), under which policy, what it ended in, and what it cost (the
 * `SandboxCost` fields: budgets charge `runMs`, plus `loadMs` when `loadAfterRecycle`; a platform hook's
 * wall time stands in for run and CPU time). Built once per call; `hook.called` and `hooks.decided`
 * reference it. Hooks that never ran (the point is not exported, or an earlier hook's decision ended the
 * point) have no record; a tool call no matcher of the hook selects has one, `skipped` (`no match`).
 * An observe-only handler's call has `observe: true`: it is emitted by `hook.called` alone, after the
 * point decided (never in `hooks.decided`), its result is always the no-op and its policy `open`.
 */
export interface HookRecord<P extends HookPoint = HookPoint> extends Readonly<SandboxCost> {
  readonly point: P;
  readonly hookId: HookId;
  readonly source: HookSource;
  /** The tenant bundle this call ran on; undefined for platform hooks. */
  readonly bundle: BundleRef | undefined;
  readonly outcome: RecordedOutcome<P>;
  /** The effective policy of this registration at this point (after the platform floor). */
  readonly policy: FailurePolicy;
  /** Lines the hook logged (capped by the prelude for tenant hooks). */
  readonly logs: readonly string[];
  /** Set on an observe-only handler's call. */
  readonly observe?: true;
}

/** A point's combined decision plus every hook call that led to it. */
export interface Dispatched<P extends HookPoint> {
  readonly decision: PointDecision<P>;
  readonly records: readonly HookRecord<P>[];
}
