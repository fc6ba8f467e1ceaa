import type { z } from "zod";
import type { DecidedBy, HookRecord, PointDecision } from "../dispatch/index.js";
import type { AssistantMessage, events, HookPoint, Message, ToolCall, ToolResult, Usage } from "../protocol/index.js";
import type { PausedRun, PendingApproval } from "./approval.js";
import type { StreamKind } from "./model.js";
import type { ModelErrorCode } from "./model-error.js";

/**
 * How a run ended: the `run.end` stop reasons, and `approval` (a hook asked a human; the run waits for
 * decisions and resumes). A run paused for approval has not ended for its hooks: `run.end` runs when the
 * resumed run ends.
 */
export type StopReason = z.infer<typeof events.StopReason> | "approval";

/** Every hook point's combined decision, with the hook calls behind it (only when at least one hook ran). */
export type HooksDecidedEvent = {
  [P in HookPoint]: {
    readonly type: "hooks.decided";
    readonly turn: number;
    readonly point: P;
    readonly decision: PointDecision<P>;
    readonly records: readonly HookRecord<P>[];
  };
}[HookPoint];

/**
 * What the loop reports while it runs, in order. `hooks.decided` carries each point's decision and its
 * provenance records; the others narrate the run for a trace.
 */
export type AgentEvent =
  | HooksDecidedEvent
  | { readonly type: "turn.started"; readonly turn: number }
  /** A message entered the durable transcript. */
  | { readonly type: "message.added"; readonly turn: number; readonly message: Message }
  | { readonly type: "inbound.dropped"; readonly turn: number; readonly message: Message; readonly reason: string }
  /** A piece of streamed model output, as it arrived (`model.stream` hooks see it coalesced). */
  | {
      readonly type: "model.delta";
      readonly turn: number;
      readonly kind: StreamKind;
      readonly delta: string;
      readonly callId?: string;
    }
  | {
      readonly type: "model.replied";
      readonly turn: number;
      readonly model: string;
      readonly message: AssistantMessage;
      readonly usage: Usage;
      readonly durationMs: number;
      /** True when a `model.request` hook answered instead of the model. */
      readonly byHook: boolean;
    }
  | {
      readonly type: "tool.finished";
      readonly turn: number;
      readonly call: ToolCall;
      /**
       * `executed`, `blocked`, `invalid`, `skipped` (by `tool.invalid`), `cancelled` (stop/abort/error) or
       * `rejected` (a human's decision on a call a hook asked about).
       */
      readonly how: "executed" | "blocked" | "invalid" | "skipped" | "cancelled" | "rejected";
      readonly result: ToolResult;
      readonly durationMs: number;
    }
  | {
      readonly type: "run.finished";
      readonly stopReason: StopReason;
      readonly reason: string | undefined;
      readonly turns: number;
      readonly usage: Usage;
    };

/** How and why a run ended. */
export interface AgentLoopResult {
  /**
   * `completed` (the model answered and every hook let it; also a `turn.end` → `end`), `stopped` (a hook's
   * `stop`, or a `terminate`), `maxTurns`, `aborted` (the signal), `error` (the model or the host failed),
   * `failed` (`output.validate` → `fail`).
   */
  readonly stopReason: StopReason;
  /** The stop's, end's or failure's reason, or the error message; undefined for a plain completion. */
  readonly reason: string | undefined;
  /** The hook whose decision ended the run, if one did. */
  readonly decidedBy: DecidedBy | undefined;
  /** Set when `stopReason` is `error`. */
  readonly error: { readonly code: ModelErrorCode | "host_error"; readonly message: string } | undefined;
  /** The durable transcript: input as delivered, every assistant message and every tool result. */
  readonly transcript: Message[];
  /** The text of the last assistant message (the final answer on a completed run). */
  readonly output: string;
  /** Model calls made (retries included); hook answers via `model.request` → `respond` count too. */
  readonly turns: number;
  readonly usage: Usage;
  /** When `stopReason` is `approval`: the calls waiting for a human's decision. */
  readonly pending?: readonly PendingApproval[];
  /** When `stopReason` is `approval`: what `resumeAgentLoop` needs to go on (JSON). */
  readonly paused?: PausedRun;
}
