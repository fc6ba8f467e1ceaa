import type { z } from "zod";
import type { DecidedBy, StopDecision } from "../dispatch/index.js";
import type { events, Message } from "../protocol/index.js";
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
