import type { ModelStreamDecision } from "./decisions.js";
import { chainRule, finished, stopOf } from "./rule.js";

const CONTINUE: ModelStreamDecision = { type: "continue" };

/**
 * `model.stream` watches coalesced deltas: a hook observes or stops the run (Rig's `Continue`/`Stop`). Open
 * by default; under a `closed` policy a failing hook stops the run.
 */
export const modelStreamRule = chainRule<"model.stream", ModelStreamDecision>({
  point: "model.stream",
  policy: "open",
  apply: (acc, result, by) => finished(acc, stopOf(result.reason, by)),
  decide: (acc) => acc.final ?? CONTINUE,
});
