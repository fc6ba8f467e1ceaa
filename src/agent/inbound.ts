import type { z } from "zod";
import type { DecidedBy, StopDecision } from "../dispatch/index.js";
import type { events, Message } from "../protocol/index.js";
import type { InboundMessage } from "./inbox.js";
import { addMessage, decide, type RunContext } from "./run-context.js";

export type InboundSource = z.infer<typeof events.InboundSource>;

/** What became of one inbound message. */
export type Delivery =
  | { readonly type: "delivered" }
  | { readonly type: "dropped"; readonly reason: string; readonly by: DecidedBy }
  | StopDecision;

/**
 * Passes one message that enters the conversation (the user's input, a steering, follow-up or peer message)
 * through `input.inbound`; a delivered message (rewritten or not) joins the transcript, a dropped one never does.
 */
export async function deliver(
  run: RunContext,
  source: InboundSource,
  message: Message,
  from?: string,
): Promise<Delivery> {
  const { decision } = await decide(
    run,
    "input.inbound",
    from === undefined ? { source, message } : { source, from, message },
  );
  switch (decision.type) {
    case "deliver":
      addMessage(run, decision.message);
      return { type: "delivered" };
    case "drop":
      run.emit({ type: "inbound.dropped", turn: run.turn, message, reason: decision.reason });
      return { type: "dropped", reason: decision.reason, by: decision.by };
    case "stop":
      return decision;
    default: {
      const never: never = decision;
      return never;
    }
  }
}

/** Delivers messages in order until a hook stops the run: the stop, or undefined when none did. */
export async function deliverAll(
  run: RunContext,
  messages: readonly InboundMessage[],
): Promise<StopDecision | undefined> {
  for (const inbound of messages) {
    const delivery = await deliver(run, inbound.source, inbound.message, inbound.from);
    if (delivery.type === "stop") return delivery;
  }
  return undefined;
}

/** Delivers queued follow-up messages: `delivered` when at least one joined the transcript (one more turn). */
export async function deliverFollowUp(
  run: RunContext,
  messages: readonly Message[],
): Promise<"delivered" | "none" | StopDecision> {
  let delivered = false;
  for (const message of messages) {
    const delivery = await deliver(run, "followUp", message);
    if (delivery.type === "stop") return delivery;
    if (delivery.type === "delivered") delivered = true;
  }
  return delivered ? "delivered" : "none";
}
