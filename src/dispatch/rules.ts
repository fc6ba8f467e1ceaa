import type { HookPoint } from "../protocol/index.js";
import type { FailurePolicy } from "./registration.js";
import { type PointRule, row } from "./rule.js";
import {
  contextPrepareRule,
  inputInboundRule,
  modelRequestRule,
  modelResponseRule,
  runStartRule,
  toolsPrepareRule,
} from "./rules-request.js";
import { modelStreamRule } from "./rules-stream.js";
import {
  outputValidateRule,
  runEndRule,
  toolCallRule,
  toolInvalidRule,
  toolResultRule,
  turnEndRule,
} from "./rules-tools.js";

/**
 * The dispatch table: one row per hook point, with its default failure policy and its stacking rule. A new
 * point is a row in the protocol's `HOOK_POINTS`, a row here and a call site (`run.dispatch(point, event)`).
 */
export const RULES: { readonly [P in HookPoint]: PointRule<P> } = {
  "run.start": row(runStartRule),
  "input.inbound": row(inputInboundRule),
  "context.prepare": row(contextPrepareRule),
  "tools.prepare": row(toolsPrepareRule),
  "model.request": row(modelRequestRule),
  "model.stream": row(modelStreamRule),
  "model.response": row(modelResponseRule),
  "tool.invalid": row(toolInvalidRule),
  "tool.call": row(toolCallRule),
  "tool.result": row(toolResultRule),
  "turn.end": row(turnEndRule),
  "output.validate": row(outputValidateRule),
  "run.end": row(runEndRule),
};

/**
 * Each point's default policy, from its row: `tool.call`, `input.inbound` and `run.start` fail closed, the
 * rest open (docs/architecture.md, "Failure is data").
 */
export const DEFAULT_POLICY: Readonly<Record<HookPoint, FailurePolicy>> = Object.freeze(
  Object.fromEntries(Object.values(RULES).map((rule) => [rule.point, rule.policy])) as Record<HookPoint, FailurePolicy>,
);
