import type { ModelStreamDecision } from "./decisions.js";
import { type Chain, chainStart, finished, noCheck, type PointRule, stopOf } from "./rule.js";

type ModelStreamAcc = Chain<"model.stream", ModelStreamDecision>;
const CONTINUE: ModelStreamDecision = { type: "continue" };

/**
 * `model.stream` watches coalesced deltas: a hook observes or stops the run (Rig's `Continue`/`Stop`). Open
 * by default; under a `closed` policy a failing hook stops the run.
 */
export const modelStreamRule: PointRule<"model.stream", ModelStreamAcc> = {
  point: "model.stream",
  policy: "open",
  start: chainStart,
  event: (acc) => acc.event,
  check: noCheck,
  apply: (acc, result, by) => finished(acc, stopOf(result.reason, by)),
  safe: (acc, failure, by) => finished(acc, stopOf(failure.code, by)),
  done: (acc) => acc.final !== undefined,
  decide: (acc) => acc.final ?? CONTINUE,
};
