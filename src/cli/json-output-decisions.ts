import { z } from "zod";
import { JsonObject, JsonValue } from "../protocol/index.js";
import { Count, Hash, Iso, Point, Version } from "./json-output-fields.js";

/** The decision log's `--json` shapes: `log`, `decisions`, and the comparison `replay` and `shadow-report` print. */

const OutcomeJson = z.strictObject({
  key: z.string().meta({ description: "`noop`, the result's type, or `failed:<code>`" }),
  result: JsonValue.nullable(),
  failure: z.string().nullable(),
});
const CostJson = z.strictObject({ calls: Count, p50: z.number().nullable(), p99: z.number().nullable() });
const Counts = z.record(z.string(), Count);

/** What two versions decided on the same events: `replay` and the shadow report print it. */
export const ComparisonJson = z
  .strictObject({
    compared: Count,
    agreed: Count,
    differed: Count,
    newFailures: Count.meta({ description: "candidate failures where the baseline did not fail" }),
    skipped: Counts.meta({ description: "events left out, by why" }),
    byPoint: z.record(z.string(), z.strictObject({ compared: Count, agreed: Count, differed: Count })),
    changes: z.array(z.strictObject({ from: z.string(), to: z.string(), count: Count })),
    failures: z.strictObject({ baseline: Counts, candidate: Counts }),
    cost: z.strictObject({ baseline: CostJson, candidate: CostJson }).meta({ description: "run time (ms)" }),
    versions: z.strictObject({ baseline: z.array(Version), candidate: z.array(Version) }),
    differences: z.array(
      z.strictObject({
        point: Point,
        runId: z.string(),
        turn: Count,
        id: z.int().positive().nullable(),
        event: JsonValue,
        baseline: OutcomeJson,
        candidate: OutcomeJson,
      }),
    ),
  })
  .meta({ title: "decision comparison" });

const LogSettingsJson = z
  .strictObject({
    sample: z.number().meta({ description: "the share of runs recorded, (0, 1]" }),
    mask: z.array(z.strictObject({ path: z.string(), action: z.enum(["drop", "hash"]) })),
    retainDays: Count,
    retain: Count,
  })
  .meta({ title: "decision-log settings" });

const DecisionJson = z
  .strictObject({
    id: z.int().positive(),
    at: Iso,
    tenantId: z.string(),
    runId: z.string(),
    turn: Count,
    point: Point,
    version: Version.meta({ description: "the bundle version that decided" }),
    hash: Hash,
    event: JsonValue.nullable().meta({ description: "null when the event was stored truncated" }),
    eventText: z.string().nullable().meta({ description: "a truncated event's first characters" }),
    eventChars: Count,
    truncated: z.boolean(),
    ctx: JsonObject,
    record: JsonObject.meta({ description: "the call's HookRecord (outcome, policy, cost, logs)" }),
    shadow: JsonObject.nullable().meta({ description: "a shadow candidate's HookRecord of the same event" }),
  })
  .meta({ title: "recorded decision" });

export const LogOutput = z.strictObject({
  tenantId: z.string(),
  settings: LogSettingsJson.nullable().meta({ description: "null: the log is off" }),
  previous: LogSettingsJson.nullable(),
  changed: z.boolean(),
});

export const DecisionsOutput = z.strictObject({
  tenantId: z.string(),
  decisions: z.array(DecisionJson),
  exported: z.strictObject({ file: z.string(), lines: Count, skipped: Count }).nullable(),
});

export const ReplayOutput = z.strictObject({
  tenantId: z.string(),
  version: Version,
  source: z.enum(["log", "file"]),
  report: ComparisonJson,
});
