/**
 * `isohook/admin`: what the `isohook` CLI does, as functions: bundle a hook folder, describe it in the
 * sandbox, run its fixtures, gate and deploy it to a store; the decision log (its writer, reading records,
 * replaying them through another version and comparing the decisions).
 */
export {
  BundleError,
  type BundleErrorCode,
  buildBundle,
  type CompiledHook,
  compileHook,
  describeBundle,
  type HookBundle,
} from "./bundler/index.js";
export {
  type ComparisonReport,
  compareDecisions,
  DecisionLog,
  type DecisionLogStats,
  type DecisionPair,
  type DecisionView,
  formatComparison,
  type LogOptions,
  type ReplayRecord,
  replayDecisions,
  replayRecordOf,
  viewOf,
} from "./decisionlog/index.js";
export { type Fixture, type FixtureReport, parseFixtures, runFixtures } from "./fixture-runner/index.js";
export { type DeployResult, deployHook, type GateReport, runDeployGate } from "./gate/index.js";
export type { ActiveBundle, BundleManifest, BundleSource } from "./protocol/index.js";
export {
  type DecisionLogStore,
  type LogSettings,
  PostgresBundleStore,
  type PostgresStoreOptions,
  SqliteBundleStore,
  type StoredBundle,
  type StoreErrorCode,
  type StoreEvent,
} from "./store/index.js";
