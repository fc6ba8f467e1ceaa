import { events, type Message } from "../protocol/index.js";
import type { InboundSource } from "./inbound.js";

/** A message from outside the run, with where it came from (`input.inbound` sees both). */
export interface InboundMessage {
  readonly source: InboundSource;
  /** Who sent it (an agent's or a supervisor's name), shown to hooks as the event's `from`. */
  readonly from?: string | undefined;
  readonly message: Message;
}

/** Where a run takes messages from while it runs: drained at every turn boundary, before the model call. */
export interface RunInbox {
  /** The messages to deliver before turn `turn`, in order; each is taken once. */
  drain(turn: number): readonly InboundMessage[];
}

/** The sources a message from outside may claim (`user` and `followUp` belong to the run's own input). */
export type SendSource = "peer" | "steering";

/**
 * Messages for a running run from another agent, a supervisor or a UI. `send` queues at once; the run
 * delivers the queue at its next turn boundary through `input.inbound` (a hook may rewrite, drop or stop),
 * and a message that arrives after the last turn is never delivered.
 *
 * ```ts
 * const inbox = new Inbox();
 * const run = runtime.runAgent({ tenantId: "acme", input: "Fix the build", inbox });
 * inbox.send("Use the staging database", { source: "peer", from: "reviewer" });
 * ```
 */
export class Inbox implements RunInbox {
  #queue: InboundMessage[] = [];

  /** Queues a user message (a string) or any message; throws `TypeError` for a bad source, sender or size. */
  send(message: string | Message, options: { readonly source?: SendSource; readonly from?: string } = {}): void {
    const source = options.source ?? "peer";
    if (source !== "peer" && source !== "steering")
      throw new TypeError(`Expected \`source\` to be "peer" or "steering", got \`${String(source)}\``);
    const body = typeof message === "string" ? { role: "user", content: message } : message;
    const event =
      options.from === undefined ? { source, message: body } : { source, from: options.from, message: body };
    const parsed = events.InputInboundEvent.safeParse(event);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new TypeError(`Cannot send this message: \`${issue?.path.join(".")}\`: ${issue?.message}`);
    }
    this.#queue.push(parsed.data);
  }

  drain(): readonly InboundMessage[] {
    const queued = this.#queue;
    this.#queue = [];
    return queued;
  }
}
