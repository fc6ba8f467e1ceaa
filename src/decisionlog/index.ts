/**
 * The decision log: the dispatcher's sink and its batched writer (sampling per run, masking, size cap,
 * retention), reading records back, and the comparison of two versions' decisions that replay and the
 * shadow report print.
 */
export { DecisionLog, type DecisionLogStats } from "./decision-log.js";
export { toDecisionRow } from "./decision-row.js";
export {
  type ComparableOutcome,
  type DecisionView,
  exportLine,
  type OutcomeKey,
  outcomeOf,
  outcomeText,
  viewOf,
} from "./decision-view.js";
export { type LogOptions, parseLogOptions } from "./log-options.js";
export { applyMask, compileMask, type MaskPlan } from "./masking.js";
export { runShare, sampledRun } from "./sampling.js";
