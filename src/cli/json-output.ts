import { z } from "zod";
import { BundleManifest, Failure, JsonObject, JsonValue, Message, Usage } from "../protocol/index.js";
import { DecisionsOutput, LogOutput, ReplayOutput } from "./json-output-decisions.js";
import { RunEventLine, StatsOutput } from "./json-output-events.js";
import { Count, Hash, Iso, Logs, Point, Version } from "./json-output-fields.js";
import { QuarantineEntry } from "./json-output-quarantine.js";
import {
  Activation,
  RolloutOutput,
  RolloutState,
  ShadowOutput,
  ShadowReportOutput,
  ShadowState,
} from "./json-output-rollout.js";

/**
 * What every command prints with `--json` (docs/cli-output.schema.json is generated from these schemas, and
 * a test runs every command against them). The contract:
 * - Everything goes to stdout, one JSON value per line; stderr stays empty.
 * - A command prints one object, except `run` and `demo`, which print one line per event and end with
 *   their result line.
 * - A failure (exit 1 or 2) ends the output with `{"error": {"code", "message", …}}`: the same object for
 *   every command, usage errors included (`code: "usage"`). A command whose report is the verdict (`test`,
 *   `fuzz`, `replay --fail-on-diff`) prints the report as on success, then the error object.
 * - `--help` with `--json` is `{"help"}`: the help text.
 * - The same thing has the same name everywhere: `version` is a bundle version number, the version active
 *   before a change is `previousVersion`, times are ISO 8601 strings, `logs` is an array of strings.
 *
 * This file maps commands to their shapes; the shapes of one concept sit beside it: the shared fields in
 * json-output-fields.ts, the decision log's in json-output-decisions.ts, rollouts' and shadow mode's in
 * json-output-rollout.ts, run events' and stats' in json-output-events.ts.
 */

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

export const ErrorOutput = z
  .strictObject({
    error: z.strictObject({
      code: z.string(),
      message: z.string(),
      usage: z.string().optional().meta({ description: "the command's usage line (usage errors)" }),
      problems: z.array(Problem).optional().meta({ description: "each problem of a hook that does not bundle" }),
      report: GateReport.optional().meta({ description: "the deploy gate's report of a rejected upload" }),
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
      laterQueuedMs: z.number(),
    }),
  ),
  problems: z.array(z.string()),
  seconds: z.number(),
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
        rollout: RolloutState.nullable(),
        shadow: ShadowState.nullable(),
        createdAt: Iso,
        updatedAt: Iso,
      }),
    ),
  }),
  versions: z.strictObject({ tenantId: z.string(), versions: z.array(z.strictObject(VersionRecord)) }),
  activate: Activation,
  rollback: Activation,
  rollout: RolloutOutput,
  shadow: ShadowOutput,
  "shadow-report": ShadowReportOutput,
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
        type: z.enum(["upload", "activate", "rollback", "delete", "log", "rollout", "shadow", "shadow_off", "release"]),
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
  quarantine: z.union([z.strictObject({ quarantines: z.array(QuarantineEntry) }), QuarantineEntry]),
  log: LogOutput,
  decisions: DecisionsOutput,
  replay: ReplayOutput,
  run: z.union([RunResult, RunEventLine]),
  demo: z.union([DemoSummary, z.strictObject({ tenant: z.string(), event: RunEventLine })]),
  stats: StatsOutput,
  mcp: z.union([
    z
      .strictObject({ type: z.literal("listening"), url: z.string() })
      .meta({ description: "--listen: the MCP endpoint" }),
    RunEventLine,
  ]),
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

const HelpOutput = z.strictObject({ help: z.string() }).meta({ title: "help", description: "--help with --json" });

/** One line of a command's `--json` output: its own shape, the error object, or its help. */
export function outputLineSchema(command: CliCommandName): z.ZodType {
  return z.union([CLI_OUTPUT[command], ErrorOutput, HelpOutput]);
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
