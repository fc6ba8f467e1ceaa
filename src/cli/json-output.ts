import { z } from "zod";
import {
  BundleManifest,
  Failure,
  HOOK_POINT_NAMES,
  type HookPoint,
  JsonObject,
  JsonValue,
  Message,
  Usage,
} from "../protocol/index.js";

/**
 * What every command prints with `--json` (docs/cli-output.schema.json is generated from these schemas, and
 * a test runs every command against them). The contract:
 * - Everything goes to stdout, one JSON value per line; stderr stays empty.
 * - A command prints one object, except `run` and `demo`, which print one line per event and end with
 *   their result line.
 * - A failure (exit 1 or 2) ends the output with `{"error": {"code", "message", …}}`: the same object for
 *   every command, usage errors included (`code: "usage"`).
 * - The same thing has the same name everywhere: `version` is a bundle version number, the version active
 *   before a change is `previousVersion`, times are ISO 8601 strings, `logs` is an array of strings.
 */
const Version = z.int().positive().meta({ description: "a bundle version number" });
const Hash = z.string().regex(/^sha256-[0-9a-f]{64}$/);
const Iso = z.iso.datetime().meta({ description: "ISO 8601 time" });
const Point = z.enum(HOOK_POINT_NAMES as [HookPoint, ...HookPoint[]]);
const Logs = z.array(z.string()).meta({ description: "console lines the hook logged" });
const Count = z.int().nonnegative();

const Problem = z.strictObject({
  message: z.string(),
  file: z.string().optional(),
  line: z.int().optional(),
  column: z.int().optional(),
});

const GateReport = z
  .looseObject({
    type: z.enum(["passed", "rejected"]),
    entry: z.string(),
    hash: Hash.nullable(),
    bytes: Count.nullable(),
    hookPoints: z.array(Point),
    reasons: z.array(z.looseObject({ code: z.string(), message: z.string() })),
    warnings: z.array(z.string()),
    fixtures: z.looseObject({ file: z.string(), total: Count, passed: Count, failed: Count }).nullable(),
    fuzz: z.array(
      z.looseObject({
        point: Point,
        observe: z.literal(true).optional(),
        runs: Count,
        passed: z.boolean(),
        seed: z.int(),
        durationMs: z.number(),
      }),
    ),
    durationMs: z.number(),
  })
  .meta({ title: "gate report" });

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

export const ErrorOutput = z
  .strictObject({
    error: z.strictObject({
      code: z.string(),
      message: z.string(),
      usage: z.string().optional().meta({ description: "the command's usage line (usage errors)" }),
      problems: z.array(Problem).optional().meta({ description: "each problem of a hook that does not bundle" }),
      report: GateReport.optional().meta({ description: "the deploy gate's report of a rejected upload" }),
      comparison: ComparisonJson.optional().meta({ description: "replay --fail-on-diff: what changed" }),
    }),
  })
  .meta({ title: "error", description: "The last line of every failed command (exit 1 or 2)." });

const FixtureResultBase = {
  line: z.int().positive(),
  name: z.string().optional(),
  point: Point,
  observe: z.literal(true).optional().meta({ description: "the line called the point's observe-only handler" }),
  logs: Logs,
  runMs: z.number().meta({ description: "the handler's run time in the sandbox" }),
  cpuMs: z.number(),
  passed: z.boolean().optional().meta({ description: "absent for a line without expect" }),
  mismatch: z.string().optional(),
};
const FixtureResult = z.discriminatedUnion("type", [
  z.strictObject({
    ...FixtureResultBase,
    type: z.literal("decided"),
    result: JsonObject.nullable(),
    state: JsonObject.optional(),
  }),
  z.strictObject({ ...FixtureResultBase, type: z.literal("failed"), failure: Failure }),
]);

const TestOutput = z.strictObject({
  file: z.string(),
  passed: Count,
  failed: Count,
  unchecked: Count,
  results: z.array(FixtureResult),
});

const VersionRecord = {
  tenantId: z.string(),
  version: Version,
  hash: Hash,
  bytes: Count,
  hookPoints: z.array(Point),
  uploadedBy: z.string(),
  uploadedAt: Iso,
  active: z.boolean(),
  rolloutPercent: z.number().nullable().meta({ description: "the share of runs it gets in a rollout in progress" }),
  shadow: z.boolean().meta({ description: "true while the version is in shadow mode" }),
};

const Percent = z.number().gt(0).max(100).meta({ description: "a share of runs, in percent (steps of 0.01)" });
const RolloutRef = z.strictObject({ version: Version, percent: Percent });

const Activation = z.strictObject({
  tenantId: z.string(),
  version: Version,
  previousVersion: Version.nullable(),
  changed: z.boolean(),
  endedRollout: RolloutRef.nullable().meta({ description: "the rollout this change ended" }),
});

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

/** A run event (`run --json`): the library's RunEvent with `at` as an ISO string. */
const RunEventLine = z
  .looseObject({
    type: z.enum([
      "run.started",
      "run.warning",
      "turn.started",
      "hooks.decided",
      "hook.called",
      "hook.shadowed",
      "message.added",
      "inbound.dropped",
      "model.replied",
      "tool.finished",
      "quarantine.entered",
      "quarantine.exited",
      "run.finished",
    ]),
    at: Iso.optional(),
    until: Iso.optional(),
    logs: Logs.optional(),
  })
  .meta({ title: "run event" });

const RunResult = z.strictObject({
  type: z.literal("result"),
  runId: z.string(),
  tenantId: z.string(),
  bundle: z.strictObject({ version: Version, hash: Hash }).nullable(),
  stopReason: z.string(),
  reason: z.string().nullable(),
  decidedBy: JsonObject.nullable(),
  error: z.strictObject({ code: z.string(), message: z.string() }).nullable(),
  warnings: z.array(z.strictObject({ code: z.string(), message: z.string() })),
  output: z.string(),
  turns: Count,
  usage: Usage,
  transcript: z.array(Message),
  pending: z
    .array(
      z.strictObject({
        callId: z.string(),
        call: z.strictObject({ id: z.string(), name: z.string(), args: JsonObject }),
        args: JsonObject.meta({ description: "the effective arguments: what runs if approved" }),
        reason: z.string(),
        question: z.string().optional(),
        by: JsonObject.meta({ description: "the hook that asked: {hookId, source}" }),
        turn: Count,
        index: Count.meta({ description: "the call's position in its batch" }),
      }),
    )
    .optional()
    .meta({ description: "stopReason approval: the calls held for a human (decide each with run --resume)" }),
  checkpoint: z
    .strictObject({ type: z.literal("isohook.checkpoint"), version: z.int(), body: z.string(), mac: z.string() })
    .optional()
    .meta({ description: "stopReason approval: the paused run, sealed (HMAC-SHA256); pass this line to run --resume" }),
});

const DemoSummary = z.strictObject({
  type: z.literal("summary"),
  tenants: z.array(
    z.strictObject({
      tenant: z.string(),
      worker: Count,
      version: Version.optional(),
      stopReason: z.string(),
      reason: z.string().optional(),
      turns: Count,
      hookCalls: Count,
      decided: z.array(z.string()),
      failures: z.record(z.string(), Count),
      quarantined: z.boolean(),
      medianMs: z.number(),
      maxMs: z.number(),
      maxQueuedMs: z.number(),
    }),
  ),
  problems: z.array(z.string()),
  seconds: z.number(),
});

const Percentiles = z.strictObject({ p50: z.number(), p99: z.number() }).meta({ description: "ms, nearest rank" });

const StatsOutput = z.strictObject({
  tenantId: z.string(),
  from: z
    .string()
    .nullable()
    .meta({ description: "the JSON lines read (a run's or demo's --json output); null: the store's decision log" }),
  since: Iso.nullable(),
  calls: Count,
  decisions: z.record(z.string(), Count).meta({ description: "decided calls by result type (noop: returned nothing)" }),
  failures: z.record(z.string(), Count).meta({ description: "failed calls by failure code" }),
  points: z.array(
    z.strictObject({
      point: Point,
      calls: Count,
      runMs: Percentiles,
      cpuMs: Percentiles,
      waitedMs: Percentiles.meta({ description: "queued + load + run, what the caller waited" }),
    }),
  ),
});

/**
 * Each command's `--json` lines: every line must match its command's schema (successes and the error).
 * Keyed by command name; `--version` is `version`.
 */
export const CLI_OUTPUT = {
  bundle: BundleManifest,
  test: TestOutput,
  upload: z.strictObject({
    tenantId: z.string(),
    version: Version,
    hash: Hash,
    bytes: Count,
    hookPoints: z.array(Point),
    activated: z.boolean(),
    report: GateReport,
  }),
  list: z.strictObject({
    tenants: z.array(
      z.strictObject({
        tenantId: z.string(),
        activeVersion: Version.nullable(),
        activeHash: Hash.nullable(),
        latestVersion: Version.nullable(),
        versionCount: Count,
        rollout: z
          .strictObject({ version: Version, hash: Hash, percent: Percent, since: Iso, by: z.string() })
          .nullable(),
        shadow: z.strictObject({ version: Version, hash: Hash, since: Iso, by: z.string() }).nullable(),
        createdAt: Iso,
        updatedAt: Iso,
      }),
    ),
  }),
  versions: z.strictObject({ tenantId: z.string(), versions: z.array(z.strictObject(VersionRecord)) }),
  activate: Activation,
  rollback: Activation,
  rollout: z.strictObject({
    tenantId: z.string(),
    version: Version,
    percent: Percent,
    activeVersion: Version,
    previousRollout: RolloutRef.nullable(),
    activated: z.boolean().meta({ description: "true when --percent 100 made the version active" }),
    changed: z.boolean(),
  }),
  shadow: z.strictObject({
    tenantId: z.string(),
    version: Version.nullable().meta({ description: "the version in shadow mode now, or null (--off)" }),
    previousVersion: Version.nullable(),
    changed: z.boolean(),
  }),
  "shadow-report": z.strictObject({
    tenantId: z.string(),
    source: z.enum(["log", "file"]).meta({ description: "the decision log, or the --from file of run events" }),
    report: ComparisonJson,
  }),
  inspect: z.strictObject({
    ...VersionRecord,
    manifest: BundleManifest,
    config: JsonValue,
    gateReport: GateReport.nullable(),
    sourceMapBytes: Count,
  }),
  audit: z.strictObject({
    entries: z.array(
      z.strictObject({
        id: z.int().positive(),
        at: Iso,
        tenantId: z.string(),
        type: z.enum(["upload", "activate", "rollback", "delete", "log", "rollout", "shadow", "shadow_off"]),
        version: Version.nullable().meta({ description: "null for a `log` change" }),
        previousVersion: Version.nullable(),
        hash: Hash.nullable(),
        by: z.string(),
        detail: z
          .string()
          .nullable()
          .meta({ description: "a `log` change: the new settings, or `off`; a rollout: its share; a rollout ended" }),
      }),
    ),
  }),
  log: z.strictObject({
    tenantId: z.string(),
    settings: LogSettingsJson.nullable().meta({ description: "null: the log is off" }),
    previous: LogSettingsJson.nullable(),
    changed: z.boolean(),
  }),
  decisions: z.strictObject({
    tenantId: z.string(),
    decisions: z.array(DecisionJson),
    exported: z.strictObject({ file: z.string(), lines: Count, skipped: Count }).nullable(),
  }),
  replay: z.strictObject({
    tenantId: z.string(),
    version: Version,
    source: z.enum(["log", "file"]),
    report: ComparisonJson,
  }),
  run: z.union([RunResult, RunEventLine]),
  demo: z.union([DemoSummary, z.strictObject({ tenant: z.string(), event: RunEventLine })]),
  stats: StatsOutput,
  schema: z.looseObject({ $schema: z.string() }).meta({ description: "a JSON Schema document" }),
  init: z.strictObject({ dir: z.string(), files: z.array(z.string()), hookPoints: z.array(Point) }),
  version: z.strictObject({ isohook: z.string() }),
  fuzz: z.union([
    z
      .looseObject({
        type: z.literal("fuzz"),
        entry: z.string().optional().meta({ description: "the hook entry fuzzed (absent for a stored bundle)" }),
        hash: Hash,
        tenantId: z.string(),
        version: Version.nullable(),
        timeoutMs: z.number(),
        seed: z.int(),
        clean: z.boolean(),
        points: z.array(z.looseObject({ point: Point })),
        durationMs: z.number(),
      })
      .meta({ description: "one bundle's report (--all: one line per tenant)" }),
    z.strictObject({ type: z.literal("skipped"), tenantId: z.string(), reason: z.string() }),
  ]),
  migrate: z.strictObject({
    store: z.enum(["sqlite", "postgres"]),
    location: z.string().meta({ description: "the path, or the URL with its password as *** and the schema" }),
    from: Count,
    to: Count,
    migrated: z.boolean(),
  }),
} as const;

export type CliCommandName = keyof typeof CLI_OUTPUT;

/** One line of a command's `--json` output: its own shape or the error object. */
export function outputLineSchema(command: CliCommandName): z.ZodType {
  return z.union([CLI_OUTPUT[command], ErrorOutput]);
}

/** The published document (docs/cli-output.schema.json): each command's line schema, keyed by command. */
export function cliOutputJsonSchema(): Record<string, unknown> {
  const names = Object.keys(CLI_OUTPUT) as CliCommandName[];
  const all = z.strictObject(Object.fromEntries(names.map((name) => [name, outputLineSchema(name)]))).meta({
    title: "isohook CLI --json output",
    description:
      "Each property is one command: every line it prints on stdout with --json matches that schema. " +
      "Failures end with the error object; run and demo print one line per event, then their result.",
  });
  // Shared parts (the error object, the gate report, messages) are written once, in $defs.
  return z.toJSONSchema(all, { unrepresentable: "any", reused: "ref" });
}

/** Clock times of run events (ms since the epoch in the library), as ISO strings in CLI output. */
const TIME_FIELDS = ["at", "until"] as const;

/**
 * A run event as its `--json` line: the library's event with clock times (`at`, `until`) as ISO strings.
 */
export function eventJson(event: object): object {
  const fields: Record<string, unknown> = { ...event };
  for (const key of TIME_FIELDS) {
    const value = fields[key];
    if (typeof value === "number") fields[key] = new Date(value).toISOString();
  }
  return fields;
}

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
