import type { LoadedScenario } from "../../agent/index.js";
import type { ActiveBundle } from "../../protocol/index.js";
import { UsageError } from "../command.js";
import { CHECKPOINT_KEY_ENV, KEY_HOW } from "./run-approval.js";

/** The literal a bundle needs to return an ask (`{ type: "ask" }`): esbuild keeps string literals as written. */
const ASK_LITERAL = /["'`]ask["'`]/;

/**
 * Refuses, before any tool runs, a run whose pause would be lost: no checkpoint key, no scenario
 * `approvals`, and a deciding bundle (the active one, or a rollout's candidate) that exports `tool.call`
 * (the one point that asks) and whose code holds the literal `"ask"`. A hook that builds the word at run
 * time is not seen here; the runtime then stops at its first ask, running no further tool.
 *
 * @throws {UsageError} naming the tenant and saying how to set the key.
 */
export function refuseUnkeptPause(loaded: LoadedScenario, bundle: ActiveBundle, hasKey: boolean): void {
  if (hasKey || loaded.scenario.approvals !== undefined) return;
  const deciding = [bundle, ...(bundle.rollout ? [bundle.rollout.bundle] : [])];
  const asking = deciding.find((b) => b.manifest.hookPoints.includes("tool.call") && ASK_LITERAL.test(b.code));
  if (asking === undefined) return;
  throw new UsageError(
    `${loaded.scenario.tenant}'s hook v${asking.version} can ask for approval, and ${CHECKPOINT_KEY_ENV} is not set, so a pause could not be kept. ${KEY_HOW}, or answer the calls in the scenario's \`approvals\`. Nothing was run.`,
  );
}
