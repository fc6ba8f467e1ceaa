export { type DeployGateOptions, type GateResult, runDeployGate } from "./deploy-gate.js";
export { type DeployHookOptions, type DeployResult, deployHook } from "./deploy-hook.js";
export { formatGateReport } from "./format-report.js";
export type {
  FixtureEvent,
  FixtureSummary,
  FuzzSummary,
  GateProblem,
  GateReason,
  GateReasonCode,
  GateReport,
} from "./gate-report.js";
export { storedFixtureEvents } from "./stored-fixtures.js";
