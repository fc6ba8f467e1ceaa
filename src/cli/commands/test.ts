import { realpath } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import {
  buildBundle,
  type HookBundle,
  HookFileError,
  isInside,
  type ResolvedEntry,
  resolveEntry,
} from "../../bundler/index.js";
import {
  type Fixture,
  FixtureError,
  type FixtureReport,
  readFixtures,
  runFixtures,
} from "../../fixture-runner/index.js";
import { failureText, type LimitsInput, TenantId } from "../../protocol/index.js";
import { clipped, line, lines, type Printed, printable } from "../../terminal/index.js";
import { bundleFailure } from "../bundle-failure.js";
import {
  CliError,
  type CliIO,
  type Command,
  EXIT,
  failedVerdict,
  type ParsedArgs,
  stringFlag,
  UsageError,
  writeJson,
  writeJsonError,
} from "../command.js";
import { hookEntryOf } from "../hook-entry.js";
import { LIMIT_OPTIONS, LIMITS_HELP, limitsOf } from "../limit-options.js";
import { openSandbox, processSandbox, type SandboxDeps } from "../sandbox-option.js";
import { folderChanges } from "../watch.js";

const HELP = `Usage: isohook test <entry> [--events file.jsonl] [--root dir] [--watch] [--json] [--timeout ms] [--memory mb]

Bundles a hook module (a .ts file, or a folder containing index.ts) and runs each event line through the
real process sandbox, printing one outcome per line. A line is one JSON object:
  {"point": "tool.call", "event": {…}, "ctx"?: {…partial ctx…}, "expect"?: {…}}
"expect" makes the line a test: {"type": "block"} or {"type": "block", "reason": "…"} matches a result
that contains those fields, {"noop": true} (or {"type": null}) the no-op, {"failure": "timeout"} a failure
code. Without --events, the fixtures.jsonl beside the entry is used.

The hook folder (the entry's folder, or --root) is the tenant's: the bundle and fixtures.jsonl may only use
regular files inside it (no symlink out, no hard link, no FIFO or device), at most 8 MiB and 10,000 lines
for an events file. Everything is checked before the sandbox starts.

Options:
  --events <file>    Event lines to run (default: <folder>/fixtures.jsonl)
  --root <dir>       The hook folder, when the entry's folder shares code with siblings inside <dir>
                     (default: the entry's folder; never a folder above it)
${LIMITS_HELP}
  -w, --watch        Run again on every save under the hook's folder, until Ctrl-C
  --json             One JSON object: {"file", "passed", "failed", "unchecked", "results": [the outcome
                     plus line, point, runMs, cpuMs, logs, passed, mismatch]}; when a line fails, then
                     {"error": {"code": "fixtures_failed", "message"}}
  -h, --help         Show this help

Exit codes: 0 every expectation met, 1 a mismatch (or the hook or events file has problems), 2 usage.
`;

/** The tenant fixture calls run as. */
const TEST_TENANT = TenantId.parse("isohook-test");

/** What the command needs from outside; tests may pass another executor. */
export type TestCommandDeps = SandboxDeps;

export function createTestCommand(deps: TestCommandDeps = processSandbox): Command {
  return {
    name: "test",
    summary: "Run a hook against event lines (its fixtures.jsonl) in the real sandbox",
    help: HELP,
    options: {
      events: { type: "string" },
      root: { type: "string" },
      watch: { type: "boolean", short: "w" },
      ...LIMIT_OPTIONS,
    },
    allowPositionals: true,
    async run(args, io) {
      const entry = await hookEntryOf(args, io.cwd);
      const limits = limitsOf(args);
      const root = stringFlag(args, "root");
      let hook: ResolvedEntry;
      try {
        hook = await resolveEntry(entry, io.cwd, root);
      } catch (error) {
        bundleFailure(error, io);
      }
      const run: TestRun = { deps, args, io, entry, root, hook, limits };
      const eventsFile = eventsFileOf(hook, stringFlag(args, "events"), io.cwd);
      if (args.values.watch !== true) return runOnce(run, eventsFile);
      const signal = io.signal;
      if (signal === undefined) throw new UsageError("--watch needs a way to stop (Ctrl-C)");
      const folder = hook.folder.root;
      const rerun = async () => {
        try {
          await runOnce(run, eventsFile);
        } catch (error) {
          if (!(error instanceof CliError) || signal.aborted) throw error;
          if (args.json) writeJsonError(io, error.code, error.message, error.details);
          else io.stderr(printable(`isohook test: ${error.message}\n`, { keepNewlines: true }));
        }
        if (!args.json) io.stdout(line`— watching ${shown(folder, io.cwd)} for changes (Ctrl-C to stop)\n`);
      };
      await rerun();
      for await (const _ of folderChanges(folder, signal)) await rerun();
      return EXIT.ok;
    },
  };
}

/** What one `isohook test` run works on: the command's inputs, resolved once (and again each --watch run). */
interface TestRun {
  readonly deps: TestCommandDeps;
  readonly args: ParsedArgs;
  readonly io: CliIO;
  readonly entry: string;
  readonly root: string | undefined;
  readonly hook: ResolvedEntry;
  readonly limits: LimitsInput;
}

/** One run of the events through the sandbox: read the events (before any sandbox starts), bundle, run, print. */
async function runOnce(run: TestRun, eventsFile: string): Promise<number> {
  const { deps, args, io, entry, root, hook, limits } = run;
  const fixtures = await eventsOf(hook, eventsFile, io.cwd);

  const executor = await openSandbox(deps, limits, io.signal);
  let reports: FixtureReport[];
  try {
    let built: HookBundle;
    try {
      built = await buildBundle(entry, { executor, cwd: io.cwd, root, signal: io.signal });
    } catch (error) {
      bundleFailure(error, io);
    }
    reports = await runFixtures({
      executor,
      bundle: built,
      tenantId: TEST_TENANT,
      fixtures,
      limits,
      ...(io.signal ? { signal: io.signal } : {}),
    });
  } catch (error) {
    if (io.signal?.aborted) throw new CliError("Aborted", "aborted");
    throw error;
  } finally {
    await executor.close();
  }
  const failed = reports.filter((r) => r.passed === false).length;
  const passed = reports.filter((r) => r.passed === true).length;
  const file = shown(eventsFile, io.cwd);
  if (args.json) {
    const unchecked = reports.length - passed - failed;
    writeJson(io, { file, passed, failed, unchecked, results: reports.map(jsonLine) });
  } else {
    for (const report of reports) io.stdout(readableLine(report));
    io.stdout(line`${totals(reports.length, passed, failed)} — ${file}\n`);
  }
  if (failed === 0) return EXIT.ok;
  return failedVerdict(io, args, "fixtures_failed", `${failed} of ${reports.length} lines failed in ${file}`);
}

export const testCommand = createTestCommand();

/** `--events` as given, else fixtures.jsonl in the entry's folder (the entry itself when it is a folder). */
function eventsFileOf(hook: ResolvedEntry, events: string | undefined, cwd: string): string {
  return events === undefined ? join(hook.dir, "fixtures.jsonl") : resolve(cwd, events);
}

/**
 * The events, read without trusting the file. One in the hook folder is the tenant's and must stay inside
 * it; one the operator names elsewhere is theirs, checked for type, size and lines only.
 */
async function eventsOf(hook: ResolvedEntry, file: string, cwd: string): Promise<Fixture[]> {
  const shownFile = shown(file, cwd);
  const dir = await realpath(dirname(file)).catch(() => dirname(file));
  let fixtures: Fixture[];
  try {
    fixtures = await readFixtures(file, {
      shown: shownFile,
      folder: isInside(hook.folder.root, dir) ? hook.folder : undefined,
    });
  } catch (error) {
    if (error instanceof HookFileError && error.code === "file_not_found") {
      throw new CliError(
        `No events file ${shownFile}: pass --events <file.jsonl>, or add fixtures.jsonl beside the hook ` +
          '(one JSON line per case: {"point": "tool.call", "event": {…}, "expect": {…}})',
        "no_fixtures",
      );
    }
    if (error instanceof HookFileError || error instanceof FixtureError) throw new CliError(error.message, error.code);
    throw error;
  }
  if (fixtures.length === 0)
    throw new CliError(`${shownFile} has no event lines: add one JSON line per case`, "no_fixtures");
  return fixtures;
}

function shown(file: string, cwd: string): string {
  return relative(cwd, file) || "."; // the folder itself when it is the working directory
}

/**
 * One `--json` result: the outcome object (docs/architecture.md, "Failure is data") plus where it came from and what it
 * cost.
 */
function jsonLine(report: FixtureReport): Record<string, unknown> {
  const { line, name, point, observe, outcome, runMs, cpuMs, passed, mismatch } = report;
  return {
    line,
    ...(name === undefined ? {} : { name }),
    point,
    ...(observe === undefined ? {} : { observe }),
    ...outcome,
    runMs: round(runMs),
    cpuMs: round(cpuMs),
    ...(passed === undefined ? {} : { passed }),
    ...(mismatch === undefined ? {} : { mismatch }),
  };
}

function readableLine(report: FixtureReport): Printed {
  const { outcome } = report;
  const mark = report.passed === undefined ? "    " : report.passed ? "ok  " : "FAIL";
  const label = report.name === undefined ? "" : ` ${report.name}:`;
  let what: string;
  if (outcome.type === "failed") what = `failed ${failureText(outcome.failure)}`;
  else if (outcome.result === null) what = "no-op";
  else {
    const { type, ...fields } = outcome.result;
    what = Object.keys(fields).length === 0 ? type : `${type} ${clipped(JSON.stringify(fields), 160)}`;
  }
  const shown = [
    `${mark} line ${report.line} ${report.observe ? "observe " : ""}${report.point}${label} → ${what} (${round(report.runMs)} ms)`,
  ];
  if (outcome.type === "failed") {
    for (const frame of outcome.failure.stack ?? []) {
      const at = `${frame.file}:${frame.line}:${frame.column}`;
      shown.push(`       at ${frame.name === undefined ? at : `${clipped(frame.name, 160)} (${at})`}`);
    }
  }
  if (report.mismatch !== undefined) shown.push(`       ${report.mismatch}`);
  for (const log of outcome.logs) shown.push(`       | ${clipped(log, 160)}`);
  // Names, messages, results and logs are the tenant's: each stays on its own line, escaped.
  return lines(shown.map((text) => printable(text)));
}

function totals(total: number, passed: number, failed: number): string {
  const unchecked = total - passed - failed;
  const parts = [`${passed} passed`, `${failed} failed`];
  if (unchecked > 0) parts.push(`${unchecked} without expect`);
  return parts.join(", ");
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
