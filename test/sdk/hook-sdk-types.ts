/**
 * Type tests for the hook SDK, checked by `npm run check` (tsc): every `@ts-expect-error` below must be an
 * error, or the check fails. They prove a hook author gets a compile error for a wrong result.
 */
import { defineHooks } from "../../sandbox/guest/hook-sdk.js";

export const accepted = [
  defineHooks({
    toolCall(event) {
      return event.call.name === "shell" ? { type: "block", reason: "no shell" } : undefined;
    },
  }),
  defineHooks({ turnEnd: async () => ({ type: "continue", message: "keep going" }) }),
  defineHooks({ toolResult: (event) => ({ type: "patch", content: event.result.content.replaceAll("sk-", "") }) }),
  defineHooks({ runEnd() {} }),
  defineHooks({ modelRequest: () => ({ type: "patch", temperature: 0, activeTools: ["read"] }) }),
  defineHooks({ toolCall: () => ({ type: "ask", reason: "pushes need a human", question: "Push to main?" }) }),
  defineHooks({ toolCall: async () => ({ type: "ask", reason: "pushes need a human" }) }),
];

export const rejected = [
  // @ts-expect-error `drop` is an input.inbound result, not a tool.call result
  defineHooks({ toolCall: () => ({ type: "drop", reason: "no" }) }),
  // @ts-expect-error handler keys are camelCase of the hook point
  defineHooks({ toolcall() {} }),
  // @ts-expect-error run.end is observe-only
  defineHooks({ runEnd: () => ({ type: "stop", reason: "x" }) }),
  // @ts-expect-error block needs a reason
  defineHooks({ toolCall: () => ({ type: "block" }) }),
  // @ts-expect-error terminate is a boolean
  defineHooks({ toolCall: () => ({ type: "block", reason: "r", terminate: "yes" }) }),
  // @ts-expect-error ask needs a reason
  defineHooks({ toolCall: () => ({ type: "ask", question: "?" }) }),
  // @ts-expect-error ask is a tool.call result only
  defineHooks({ toolResult: () => ({ type: "ask", reason: "?" }) }),
  // @ts-expect-error the question is text
  defineHooks({ toolCall: () => ({ type: "ask", reason: "r", question: { text: "?" } }) }),
  // @ts-expect-error the event has no such field
  defineHooks({ toolCall: (event) => ({ type: "rewrite", args: event.arguments }) }),
];

export const matchedAndObserved = [
  defineHooks({
    toolCall: { tools: ["shell", "git_*"], handler: (event) => ({ type: "block", reason: `no ${event.call.name}` }) },
    toolResult: { tools: ["read_?ile"], handler: () => undefined },
    toolInvalid: { tools: ["*"], handler: () => ({ type: "skip", reason: "unknown tool" }) },
  }),
  defineHooks({
    observe: {
      toolResult(event, ctx) {
        ctx.state.seen = Number(ctx.state.seen ?? 0) + event.result.content.length;
        return "ignored";
      },
      toolCall: { tools: ["shell"], handler: () => undefined },
      runEnd: async () => undefined,
    },
  }),
];

// A composing module calls another module's function handler with (event, ctx).
const composed = defineHooks({ toolCall: (event) => (event.call.name === "x" ? undefined : undefined) });
export const composedCall = composed.toolCall;

export const rejectedForms = [
  // @ts-expect-error only tool points take { tools, handler }
  defineHooks({ turnEnd: { tools: ["shell"], handler: () => undefined } }),
  // @ts-expect-error a matched handler still returns a result of its point
  defineHooks({ toolCall: { tools: ["shell"], handler: () => ({ type: "drop", reason: "no" }) } }),
  // @ts-expect-error tools is a list of globs
  defineHooks({ toolCall: { tools: "shell", handler: () => undefined } }),
  // @ts-expect-error observe handlers use the hook point's handler keys
  defineHooks({ observe: { toolresult() {} } }),
];
