import { z } from "zod";
import type { DecidedBy } from "../dispatch/index.js";
import {
  type AssistantMessage,
  JsonObject,
  MAX_REASON_CHARS,
  type Message,
  type ToolCall,
  type ToolMessage,
  type Usage,
} from "../protocol/index.js";

/**
 * A tool call a `tool.call` hook asked a human about (`{type: "ask"}`): the run ended with stop reason
 * `approval` and waits for a decision on it. `args` are the effective arguments (after every rewrite): what
 * runs if it is approved. `by` names the hook that asked.
 */
export interface PendingApproval {
  readonly callId: string;
  /** The call as it reached `tool.call` (after a `tool.invalid` repair, before rewrites). */
  readonly call: ToolCall;
  readonly args: JsonObject;
  readonly reason: string;
  readonly question?: string;
  readonly by: DecidedBy;
  readonly turn: number;
  /** The call's position in its batch. */
  readonly index: number;
}

/**
 * A human's answer to one pending call. `approve` runs it with its effective args; `edit` replaces the args
 * (re-checked against the tool's schema, then through the `tool.call` hooks again, which may still block or
 * stop it; an ask there is answered by the edit); `reject` gives the model the error result `rejected: <reason>`.
 */
export const ApprovalDecision = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("approve") }),
  z.strictObject({ type: z.literal("edit"), args: JsonObject }),
  z.strictObject({ type: z.literal("reject"), reason: z.string().min(1).max(MAX_REASON_CHARS) }),
]);
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

/** One decision per pending call, by `callId`. */
export type ApprovalDecisions = Readonly<Record<string, ApprovalDecision>>;

/** A batch held for approval: the turn's assistant message and each call's tool message (null while pending). */
export interface PausedBatch {
  readonly message: AssistantMessage;
  /**
   * Per call, in call order: its tool message, or null for a pending call. Messages before the first pending
   * call are in the transcript already; the others join it, in call order, once every call has its result.
   */
  readonly results: readonly (ToolMessage | null)[];
  readonly pending: readonly PendingApproval[];
  /** A `terminate` decided during the batch: the run ends after it. */
  readonly terminate?: { readonly reason: string; readonly by?: DecidedBy | undefined } | undefined;
}

/** Everything the loop needs to go on with a run that paused for approval (JSON). */
export interface PausedRun {
  readonly turn: number;
  readonly transcript: readonly Message[];
  readonly turns: number;
  readonly usage: Usage;
  readonly output: string;
  readonly modelCalls: number;
  readonly batch: PausedBatch;
}

/** Why a set of decisions does not answer a paused run's pending calls, or undefined when it does. */
export function decisionsProblem(pending: readonly PendingApproval[], decisions: unknown): string | undefined {
  if (typeof decisions !== "object" || decisions === null || Array.isArray(decisions))
    return "Expected `decisions` to be an object of decisions by call id";
  const ids = new Set(pending.map((p) => p.callId));
  const known = [...ids].join(", ");
  for (const [callId, decision] of Object.entries(decisions)) {
    if (!ids.has(callId)) return `No pending call has the id \`${callId}\`; the pending calls are ${known}`;
    const parsed = ApprovalDecision.safeParse(decision);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return `The decision for \`${callId}\` is not {type: "approve"} | {type: "edit", args} | {type: "reject", reason}: ${issue?.path.join(".") || "(decision)"}: ${issue?.message}`;
    }
  }
  const missing = [...ids].filter((id) => !Object.hasOwn(decisions, id));
  if (missing.length > 0) return `Every pending call needs a decision; none for ${missing.join(", ")}`;
  return undefined;
}

export function pendingCall(call: ToolCall, args: JsonObject): ToolCall {
  return { id: call.id, name: call.name, args };
}
