import type { HookEvent } from "../protocol/index.js";
import type {
  DecidedBy,
  OutputValidateDecision,
  RunEndDecision,
  ToolCallDecision,
  ToolInvalidDecision,
  ToolResultDecision,
  TurnEndDecision,
} from "./decisions.js";
import { type Chain, chainRule, finished, noCheck, type PointRule, rewritten, stopOf } from "./rule.js";

/** The rules of the points from the model's tool calls to the end of the run. */

export const toolInvalidRule = chainRule<"tool.invalid", ToolInvalidDecision>({
  point: "tool.invalid",
  policy: "open",
  apply(acc, result, by) {
    switch (result.type) {
      case "fail":
        return finished(acc, { type: "fail", by });
      case "retry":
        return finished(acc, { type: "retry", feedback: result.feedback, by });
      case "repair":
        return finished(
          acc,
          result.args === undefined
            ? { type: "repair", name: result.name, by }
            : { type: "repair", name: result.name, args: result.args, by },
        );
      case "skip":
        return finished(acc, { type: "skip", reason: result.reason, by });
      case "stop":
        return finished(acc, stopOf(result.reason, by));
      default: {
        const never: never = result;
        return never;
      }
    }
  },
  decide: (acc) => acc.final ?? { type: "fail" },
});

interface ToolCallAcc extends Chain<"tool.call", ToolCallDecision> {
  /** The first `ask`: it stands unless a later hook blocks or stops the call. */
  readonly asked:
    | { readonly reason: string; readonly question: string | undefined; readonly by: DecidedBy }
    | undefined;
}

/** `tool.call` re-validates each rewrite against the tool's own schema (the dispatch's `validateArgs`). */
export const toolCallRule: PointRule<"tool.call", ToolCallAcc> = {
  point: "tool.call",
  policy: "closed",
  start: (event) => ({ event, changed: false, final: undefined, asked: undefined }),
  event: (acc) => acc.event,
  check(_acc, result, options) {
    const validateArgs = options?.validateArgs;
    if (result.type !== "rewrite" || validateArgs === undefined) return undefined;
    const problem = validateArgs(result.args);
    return problem === undefined ? undefined : `The rewritten arguments do not fit the tool's schema: ${problem}`;
  },
  apply(acc, result, by) {
    switch (result.type) {
      case "rewrite":
        return withAsk(rewritten(acc, { ...acc.event, call: { ...acc.event.call, args: result.args } }), acc.asked);
      case "block":
        return withAsk(finished(acc, block(acc, result.reason, result.terminate ?? false, by)), acc.asked);
      case "ask":
        return acc.asked ? acc : withAsk(acc, { reason: result.reason, question: result.question, by });
      case "stop":
        return withAsk(finished(acc, stopOf(result.reason, by)), acc.asked);
      default: {
        const never: never = result;
        return never;
      }
    }
  },
  // A failure is never an ask: closed stays block.
  safe: (acc, failure, by) => withAsk(finished(acc, block(acc, failure.code, false, by)), acc.asked),
  done: (acc) => acc.final !== undefined,
  decide(acc) {
    if (acc.final !== undefined) return acc.final;
    const args = acc.event.call.args;
    if (acc.asked === undefined) return { type: "execute", args, rewritten: acc.changed };
    const { reason, question, by } = acc.asked;
    return question === undefined
      ? { type: "ask", reason, args, rewritten: acc.changed, by }
      : { type: "ask", reason, question, args, rewritten: acc.changed, by };
  },
};

/** The chain plus the ask, as one literal (object spread here cost microseconds per call). */
function withAsk(chain: Chain<"tool.call", ToolCallDecision>, asked: ToolCallAcc["asked"]): ToolCallAcc {
  return { event: chain.event, changed: chain.changed, final: chain.final, asked };
}

function block(acc: ToolCallAcc, reason: string, terminate: boolean, by: DecidedBy): ToolCallDecision {
  return { type: "block", reason, terminate, args: acc.event.call.args, by };
}

interface ToolResultAcc extends Chain<"tool.result", ToolResultDecision> {
  /** The hook whose patch set `terminate: true` last, while no later patch set it false. */
  readonly terminatedBy: DecidedBy | undefined;
}
export const toolResultRule: PointRule<"tool.result", ToolResultAcc> = {
  point: "tool.result",
  policy: "open",
  start: (event) => ({ event, changed: false, final: undefined, terminatedBy: undefined }),
  event: (acc) => acc.event,
  check: noCheck,
  apply(acc, result, by) {
    if (result.type === "stop") return { ...acc, final: stopOf(result.reason, by) };
    const terminatedBy = result.terminate === undefined ? acc.terminatedBy : result.terminate ? by : undefined;
    if (result.content === undefined && result.isError === undefined && result.details === undefined) {
      return { ...acc, terminatedBy };
    }
    // Field-wise: each field a patch sets replaces that field; the others stay as earlier hooks left them.
    const patched = { ...acc.event.result };
    if (result.content !== undefined) patched.content = result.content;
    if (result.isError !== undefined) patched.isError = result.isError;
    if (result.details !== undefined) patched.details = result.details;
    return { ...acc, event: { ...acc.event, result: patched }, changed: true, terminatedBy };
  },
  safe: (acc, failure, by) => ({ ...acc, final: stopOf(failure.code, by) }),
  done: (acc) => acc.final !== undefined,
  decide(acc) {
    if (acc.final !== undefined) return acc.final;
    const { result } = acc.event;
    return acc.terminatedBy === undefined
      ? { type: "result", result, terminate: false, patched: acc.changed }
      : { type: "result", result, terminate: true, terminatedBy: acc.terminatedBy, patched: acc.changed };
  },
};

interface TurnEndAcc {
  readonly event: HookEvent<"turn.end">;
  readonly best: TurnEndDecision;
}
const TURN_RANK: Record<TurnEndDecision["type"], number> = { default: 0, continue: 1, end: 2, stop: 3 };

/** Every hook runs; the strongest kind wins (stop > end > continue > default), the first of that kind decides. */
function strongest(acc: TurnEndAcc, next: TurnEndDecision): TurnEndAcc {
  return TURN_RANK[next.type] > TURN_RANK[acc.best.type] ? { event: acc.event, best: next } : acc;
}

export const turnEndRule: PointRule<"turn.end", TurnEndAcc> = {
  point: "turn.end",
  policy: "open",
  start: (event) => ({ event, best: { type: "default" } }),
  event: (acc) => acc.event,
  check: noCheck,
  apply(acc, result, by) {
    switch (result.type) {
      case "continue":
        return strongest(
          acc,
          result.message === undefined ? { type: "continue", by } : { type: "continue", message: result.message, by },
        );
      case "end":
        return strongest(
          acc,
          result.reason === undefined ? { type: "end", by } : { type: "end", reason: result.reason, by },
        );
      case "stop":
        return strongest(acc, stopOf(result.reason, by));
      default: {
        const never: never = result;
        return never;
      }
    }
  },
  safe: (acc, failure, by) => strongest(acc, stopOf(failure.code, by)),
  done: () => false,
  decide: (acc) => acc.best,
};

export const outputValidateRule = chainRule<"output.validate", OutputValidateDecision>({
  point: "output.validate",
  policy: "open",
  apply(acc, result, by) {
    switch (result.type) {
      case "accept":
        return acc;
      case "retry":
        return finished(acc, { type: "retry", feedback: result.feedback, by });
      case "fail":
        return finished(acc, { type: "fail", reason: result.reason, by });
      default: {
        const never: never = result;
        return never;
      }
    }
  },
  decide: (acc) => acc.final ?? { type: "accept" },
});

const OBSERVED: RunEndDecision = { type: "observed" };

/** Observe-only: every hook runs and nothing a hook returns or a failure does changes the run. */
export const runEndRule = chainRule<"run.end", RunEndDecision>({
  point: "run.end",
  policy: "open",
  apply: (acc) => acc,
  safe: (acc) => acc,
  done: () => false,
  decide: () => OBSERVED,
});
