import { compileHook, describeBundle, resolveEntry } from "../../bundler/index.js";
import { type FuzzReport, fuzzBundle, fuzzDictionary, type SeedEvent } from "../../fuzz/index.js";
import { type HookExecutor, type HookPoint, Limits, type LimitsInput, TenantId } from "../../protocol/index.js";
import { line, lines } from "../../terminal/index.js";
import { bundleFailure } from "../bundle-failure.js";
import {
  CliError,
  type CliIO,
  type Command,
  EXIT,
  failedVerdict,
  integerFlag,
  type ParsedArgs,
  stringFlag,
  UsageError,
  writeJson,
} from "../command.js";
import { hookEntryOf } from "../hook-entry.js";
import { hookPointOf } from "../hook-point-option.js";
import { LIMIT_OPTIONS, LIMITS_HELP, limitsOf } from "../limit-options.js";
import { openSandbox, processSandbox, type SandboxDeps } from "../sandbox-option.js";
import { STORE_HELP, STORE_OPTION, tenantFlag, withStore } from "../store-option.js";
import { fuzzReportLines, sweepLine } from "./fuzz-output.js";
import { fixtureSeeds, type Subject, storedSubject } from "./fuzz-subject.js";

const HELP = `Usage: isohook fuzz <entry> | --tenant <id> [--version <n>] | --all  [options]

Fuzzes a hook bundle through the real process sandbox: for every exported hook point (or --points),
generated valid events (the point's schema, with the strings of the hook's fixtures and code mixed in)
and mutations of its fixture events. Each distinct failure is shrunk and shown with the --seed that
replays it; CPU per call is summarised as p50/p99/max and the headroom to the timeout.

Timeout hunting (on by default; --no-grow turns it off): the strings and arrays of the fixture events and
of one event per decision the fuzz reached are grown ×2 up to the event cap, and CPU time is fitted
against size on a log-log scale. Growth with a slope ≥ 1.5 (quadratic backtracking, nested loops) is
flagged with the input that shows it and the size at which a call would reach its timeout.

  <entry>            A hook module (a .ts file or a folder with index.ts); its fixtures.jsonl is used if present
  --tenant <id>      A stored bundle instead: the tenant's active version (or --version), with its config
                     and the fixture events its deploy gate report kept
  --all              Every tenant's active bundle in the store, one line per tenant (--time per bundle)

Options:
  --root <dir>       With <entry>: the hook folder, when the entry's folder shares code with siblings
                     inside <dir> (default: the entry's folder; never a folder above it)
  --points <p,…>     Only these hook points (default: every exported point)
  --runs <n>         Generated events per point, 1-1000000 (default 1000)
  --time <s>         Time budget for the whole bundle in seconds, 1-86400 (default 30; 10 per bundle with --all)
  --seed <n>         Seed of the random fuzz (default: random; printed to replay a run)
${LIMITS_HELP}
  --no-grow          No timeout hunting
${STORE_HELP}
  --json             The report as one JSON object (--all: one per tenant); on a finding, then
                     {"error": {"code": "fuzz_findings", "message"}}
  -h, --help         Show this help

Exit codes: 0 clean, 1 a failure or super-linear growth found (or the bundle cannot be fuzzed), 2 usage.
`;

/** The tenant a hook built from source runs as. */
const FUZZ_TENANT = TenantId.parse("isohook-fuzz");
const DEFAULT_RUNS = 1_000;
const DEFAULT_TIME_S = 30;
const DEFAULT_SWEEP_TIME_S = 10;

/** What the command needs from outside; tests may pass another executor. */
export type FuzzCommandDeps = SandboxDeps;

export function createFuzzCommand(deps: FuzzCommandDeps = processSandbox): Command {
  return {
    name: "fuzz",
    summary: "Fuzz a hook (or every tenant's active bundle) in the sandbox and hunt for timeouts",
    help: HELP,
    options: {
      tenant: { type: "string" },
      version: { type: "string" },
      all: { type: "boolean" },
      points: { type: "string" },
      runs: { type: "string" },
      time: { type: "string" },
      seed: { type: "string" },
      root: { type: "string" },
      ...LIMIT_OPTIONS,
      grow: { type: "boolean" },
      "no-grow": { type: "boolean" },
      ...STORE_OPTION,
    },
    allowPositionals: true,
    async run(args, io) {
      const mode = modeOf(args);
      const limitsInput = limitsOf(args);
      if (args.values.grow === true && args.values["no-grow"] === true)
        throw new UsageError("Pass --grow or --no-grow, not both");
      const settings = {
        limits: Limits.parse(limitsInput),
        points: pointsFlag(args),
        runs: integerFlag(args, "runs", 1, 1_000_000) ?? DEFAULT_RUNS,
        timeMs:
          (integerFlag(args, "time", 1, 86_400) ?? (mode === "all" ? DEFAULT_SWEEP_TIME_S : DEFAULT_TIME_S)) * 1000,
        seed: integerFlag(args, "seed", -(2 ** 31), 2 ** 31 - 1) ?? Math.floor(Math.random() * 2 ** 31),
        grow: args.values["no-grow"] !== true,
      };
      if (mode === "entry") {
        const entry = await hookEntryOf(args, io.cwd);
        const root = stringFlag(args, "root");
        let built: Awaited<ReturnType<typeof compileHook>>;
        let seeds: SeedEvent[];
        try {
          // The tenant's folder is read and checked (fixtures included) before any sandbox starts.
          seeds = await fixtureSeeds(await resolveEntry(entry, io.cwd, root), io.cwd);
          built = await compileHook(entry, { cwd: io.cwd, root, signal: io.signal });
        } catch (error) {
          bundleFailure(error, io);
        }
        return withExecutor(deps, limitsInput, io, async (executor) => {
          const manifest = await describeBundle(built, executor, { tenantId: FUZZ_TENANT, signal: io.signal }).catch(
            (error: unknown) => bundleFailure(error, io),
          );
          const subject: Subject = {
            label: entry,
            tenantId: FUZZ_TENANT,
            bundle: { hash: built.hash, code: built.code },
            manifest,
            config: {},
            exported: manifest.hookPoints,
            seeds,
            replay: `isohook fuzz ${entry}`,
          };
          const report = await fuzzSubject(executor, subject, settings, io);
          if (args.json) writeJson(io, { entry, ...report });
          else io.stdout(lines(fuzzReportLines(report, subject.label, replayOf(subject, settings))));
          return report.clean ? EXIT.ok : failedVerdict(io, args, "fuzz_findings", `${entry} failed the fuzz`);
        });
      }
      return withStore(args, io, { create: false }, async (store) => {
        const tenants =
          mode === "all" ? (await store.tenants(io.signal)).map((t) => t.tenantId) : [tenantFlag(args, true)];
        const version = integerFlag(args, "version", 1, Number.MAX_SAFE_INTEGER);
        const width = Math.max(0, ...tenants.map((t) => t.length));
        return withExecutor(deps, limitsInput, io, async (executor) => {
          let clean = true;
          for (const tenantId of tenants) {
            const subject = await storedSubject(store, tenantId, mode === "all" ? undefined : version, io);
            if (subject === undefined && mode !== "all") {
              const known = (await store.tenant(tenantId, io.signal)) !== undefined;
              throw new CliError(
                known
                  ? `Tenant \`${tenantId}\` has no active version: pass --version <n> (see \`isohook versions --tenant ${tenantId}\`).`
                  : `No tenant \`${tenantId}\` in the store. Run \`isohook list\` to see every tenant.`,
                "not_found",
              );
            }
            // In a sweep, --points narrows each bundle to the points it exports; one exporting none is skipped.
            const points =
              mode === "all" ? settings.points?.filter((p) => subject?.exported.includes(p)) : settings.points;
            const skip =
              subject === undefined ? "no active version" : points?.length === 0 ? "exports none of --points" : "";
            if (subject === undefined || skip !== "") {
              if (args.json) writeJson(io, { type: "skipped", tenantId, reason: skip });
              else io.stdout(line`${tenantId.padEnd(width)}  -     ${skip}, skipped\n`);
              continue;
            }
            const report = await fuzzSubject(executor, subject, { ...settings, points }, io);
            clean &&= report.clean;
            if (args.json) writeJson(io, report);
            else if (mode === "all") io.stdout(lines([sweepLine(report, width)]));
            else io.stdout(lines(fuzzReportLines(report, subject.label, replayOf(subject, settings))));
          }
          return clean ? EXIT.ok : failedVerdict(io, args, "fuzz_findings", "A fuzzed bundle failed: see its report");
        });
      });
    },
  };
}

export const fuzzCommand = createFuzzCommand();

function modeOf(args: ParsedArgs): "entry" | "tenant" | "all" {
  const chosen = [args.positionals.length > 0, args.values.tenant !== undefined, args.values.all === true];
  if (chosen.filter(Boolean).length !== 1)
    throw new UsageError("Fuzz one thing: a hook entry, --tenant <id>, or --all (every tenant's active bundle)");
  if (args.positionals.length > 1) throw new UsageError(`Expected one hook entry, got ${args.positionals.length}`);
  if (args.values.version !== undefined && args.values.tenant === undefined)
    throw new UsageError("--version needs --tenant <id>");
  if (args.values.store !== undefined && args.positionals.length > 0)
    throw new UsageError("--store is for --tenant and --all; a hook entry is bundled from source");
  return chosen[0] ? "entry" : chosen[1] ? "tenant" : "all";
}

function pointsFlag(args: ParsedArgs): HookPoint[] | undefined {
  const raw = args.values.points;
  if (typeof raw !== "string") return undefined;
  const points = raw
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  if (points.length === 0) throw new UsageError("Expected --points to list hook points, e.g. --points tool.call");
  return points.map((point) => hookPointOf(point, "--points"));
}

interface Settings {
  readonly limits: Limits;
  readonly points: readonly HookPoint[] | undefined;
  readonly runs: number;
  readonly timeMs: number;
  readonly seed: number;
  readonly grow: boolean;
}

async function fuzzSubject(
  executor: HookExecutor,
  subject: Subject,
  settings: Settings,
  io: CliIO,
): Promise<FuzzReport> {
  const missing = settings.points?.filter((p) => !subject.exported.includes(p)) ?? [];
  if (missing.length > 0) {
    throw new UsageError(
      `${subject.label} does not export ${missing.join(", ")} (it exports ${subject.exported.join(", ") || "nothing"})`,
    );
  }
  const { limits } = settings;
  const target = {
    executor,
    bundle: subject.bundle,
    manifest: subject.manifest,
    tenantId: subject.tenantId,
    ...(subject.version === undefined ? {} : { version: subject.version }),
    config: subject.config,
    limits,
  };
  try {
    return await fuzzBundle(target, {
      points: settings.points ?? subject.exported,
      dictionary: fuzzDictionary(
        subject.seeds.map((s) => s.event),
        subject.bundle.code,
      ),
      seeds: subject.seeds,
      runs: settings.runs,
      timeMs: settings.timeMs,
      seed: settings.seed,
      grow: settings.grow,
      ...(io.signal ? { signal: io.signal } : {}),
    });
  } catch (error) {
    if (io.signal?.aborted) throw new CliError("Aborted", "aborted");
    throw error;
  }
}

function replayOf(subject: Subject, settings: Settings): (point: HookPoint) => string {
  const extra = [
    settings.limits.timeoutMs === 50 ? "" : ` --timeout ${settings.limits.timeoutMs}`,
    settings.limits.memoryMb === 32 ? "" : ` --memory ${settings.limits.memoryMb}`,
  ].join("");
  return (point) =>
    `${subject.replay} --points ${point} --runs ${settings.runs} --seed ${settings.seed}${extra} --no-grow`;
}

async function withExecutor(
  deps: FuzzCommandDeps,
  limits: LimitsInput,
  io: CliIO,
  fn: (executor: HookExecutor) => Promise<number>,
): Promise<number> {
  const executor = await openSandbox(deps, limits, io.signal);
  try {
    return await fn(executor);
  } finally {
    await executor.close();
  }
}
