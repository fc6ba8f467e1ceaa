import { z } from "zod";
import { ComparisonJson } from "./json-output-decisions.js";
import { Hash, Iso, Version } from "./json-output-fields.js";

/** The `--json` shapes of a tenant's candidates: rollouts, shadow mode, and the activations that end a rollout. */

export const Percent = z.number().gt(0).max(100).meta({ description: "a share of runs, in percent (steps of 0.01)" });
const RolloutRef = z.strictObject({ version: Version, percent: Percent });

/** A tenant's rollout in progress, as `list` shows it. */
export const RolloutState = z.strictObject({
  version: Version,
  hash: Hash,
  percent: Percent,
  since: Iso,
  by: z.string(),
});
/** A tenant's version in shadow mode, as `list` shows it. */
export const ShadowState = z.strictObject({ version: Version, hash: Hash, since: Iso, by: z.string() });

/** `activate` and `rollback`. */
export const Activation = z.strictObject({
  tenantId: z.string(),
  version: Version,
  previousVersion: Version.nullable(),
  changed: z.boolean(),
  endedRollout: RolloutRef.nullable().meta({ description: "the rollout this change ended" }),
});

export const RolloutOutput = z.strictObject({
  tenantId: z.string(),
  version: Version,
  percent: Percent,
  activeVersion: Version,
  previousRollout: RolloutRef.nullable(),
  activated: z.boolean().meta({ description: "true when --percent 100 made the version active" }),
  changed: z.boolean(),
});

export const ShadowOutput = z.strictObject({
  tenantId: z.string(),
  version: Version.nullable().meta({ description: "the version in shadow mode now, or null (--off)" }),
  previousVersion: Version.nullable(),
  changed: z.boolean(),
});

export const ShadowReportOutput = z.strictObject({
  tenantId: z.string(),
  source: z.enum(["log", "file"]).meta({ description: "the decision log, or the --from file of run events" }),
  report: ComparisonJson,
});

/** An activation or rollback as its `--json` object (`previous` is `previousVersion`, as in `audit`). */
export function activationJson(result: {
  readonly tenantId: string;
  readonly version: number;
  readonly previous: number | null;
  readonly changed: boolean;
  readonly endedRollout: { readonly version: number; readonly percent: number } | null;
}) {
  return {
    tenantId: result.tenantId,
    version: result.version,
    previousVersion: result.previous,
    changed: result.changed,
    endedRollout: result.endedRollout,
  };
}
