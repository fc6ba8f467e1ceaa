/**
 * The decision log: the dispatcher's sink and its batched writer (sampling per run, masking, size cap,
 * retention), reading records back, and the comparison of two versions' decisions that replay and the
 * shadow report print.
 */

export {
  type ComparedSide,
  type CompareOptions,
  type ComparisonDifference,
  type ComparisonReport,
  type CostSummary,
  compareDecisions,
  type DecisionPair,
  type PointCounts,
  sameOutcome,
} from "./compare.js";
export { DecisionLog, type DecisionLogStats } from "./decision-log.js";
export { toDecisionRow } from "./decision-row.js";
export {
  type ComparableOutcome,
  type DecisionView,
  exportLine,
  type OutcomeKey,
  outcomeOf,
  outcomeText,
  recordOf,
  viewOf,
} from "./decision-view.js";
export { type ComparisonLabels, formatComparison } from "./format-comparison.js";
export { type DecisionsDroppedEvent, type LogOptions, parseLogOptions } from "./log-options.js";
export { applyMask, compileMask, type MaskPlan } from "./masking.js";
export {
  comparable,
  comparedSide,
  type ReplayOptions,
  type ReplayRecord,
  replayDecisions,
  replayRecordOf,
  replayRecordOfLine,
  shadowPairOf,
} from "./replay.js";
export { runShare, sampledRun } from "./sampling.js";
