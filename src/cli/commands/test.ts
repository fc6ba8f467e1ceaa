import { readFile, stat } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { createHookExecutor } from "../../../sandbox/supervisor/index.js";
import { buildBundle, type HookBundle } from "../../bundler/index.js";
import { FixtureError, type FixtureReport, parseFixtures, runFixtures } from "../../fixtures/index.js";
import { failureText, type HookExecutor, type LimitsInput, TenantId } from "../../protocol/index.js";
import { bundleFailure } from "../bundle-failure.js";
import {
  CliError,
  type CliIO,
  type Command,
  EXIT,
  type ParsedArgs,
  stringFlag,
  UsageError,
  writeJson,
  writeJsonError,
} from "../command.js";
import { hookEntryOf } from "../hook-entry.js";
import { LIMIT_OPTIONS, LIMITS_HELP, limitsOf } from "../limit-options.js";
import { folderChanges } from "../watch.js";

const HELP = `Usage: isohook test <entry> [--events file.jsonl] [--watch] [--json] [--timeout ms] [--memory mb]

Bundles a hook module (a .ts file, or a folder containing index.ts) and runs each event line through the
real process sandbox, printing one outcome per line. A line is one JSON object:
  {"point": "tool.call", "event": {…}, "ctx"?: {…partial ctx…}, "expect"?: {…}}
"expect" makes the line a test: {"type": "block"} or {"type": "block", "reason": "…"} matches a result
that contains those fields, {"noop": true} (or {"type": null}) the no-op, {"failure": "timeout"} a failure
code. Without --events, the fixtures.jsonl beside the entry is used.

Options:
  --events <file>    Event lines to run (default: <folder>/fixtures.jsonl)
${LIMITS_HELP}
  -w, --watch        Run again on every save under the hook's folder, until Ctrl-C
  --json             One JSON object: {"file", "passed", "failed", "unchecked", "results": [the outcome
                     plus line, point, durationMs, cpuMs, logs, passed, mismatch]}
  -h, --help         Show this help

Exit codes: 0 every expectation met, 1 a mismatch (or the hook or events file has problems), 2 usage.
`;

/** The tenant fixture calls run as. */
const TEST_TENANT = TenantId.parse("isohook-test");

/** What the command needs from outside; tests may pass another executor. */
export interface TestCommandDeps {
  /** Opens the sandbox the events run in, with these limits; the command closes it. */
  readonly openExecutor: (limits: LimitsInput, signal?: AbortSignal) => Promise<HookExecutor>;
}

/** The default: the real process sandbox, one worker, no spare. */
const defaultDeps: TestCommandDeps = {
  openExecutor: (limits, signal) =>
    createHookExecutor({ workers: 1, spareWorker: false, limits, ...(signal ? { signal } : {}) }),
};

export function createTestCommand(deps: TestCommandDeps = defaultDeps): Command {
  return {
    name: "test",
    summary: "Run a hook against event lines (its fixtures.jsonl) in the real sandbox",
    help: HELP,
    options: { events: { type: "string" }, watch: { type: "boolean", short: "w" }, ...LIMIT_OPTIONS },
    allowPositionals: true,
    async run(args, io) {
      const entry = await hookEntryOf(args, io.cwd);
      const limits = limitsOf(args);
      const eventsFile = await eventsFileOf(entry, stringFlag(args, "events"), io.cwd);
      if (args.values.watch !== true) return runOnce(deps, args, io, entry, limits, eventsFile);
      const signal = io.signal;
      if (signal === undefined) throw new UsageError("--watch needs a way to stop (Ctrl-C)");
      const folder = await hookFolderOf(entry, io.cwd);
      const rerun = async () => {
        try {
          await runOnce(deps, args, io, entry, limits, eventsFile);
        } catch (error) {
          if (!(error instanceof CliError) || signal.aborted) throw error;
          if (args.json) writeJsonError(io, error.code, error.message, error.details);
          else io.stderr(`isohook test: ${error.message}\n`);
        }
        if (!args.json) io.stdout(`— watching ${shown(folder, io.cwd)} for changes (Ctrl-C to stop)\n`);
      };
      await rerun();
      for await (const _ of folderChanges(folder, signal)) await rerun();
      return EXIT.ok;
    },
  };
}

/** One run of the events through the sandbox: bundle, run, print; the exit code. */
async function runOnce(
  deps: TestCommandDeps,
  args: ParsedArgs,
  io: CliIO,
  entry: string,
  limits: LimitsInput,
  eventsFile: string,
): Promise<number> {
  const fixtures = parseEvents(await readEvents(eventsFile, io.cwd), shown(eventsFile, io.cwd));

  const executor = await open(deps, limits, io.signal);
  let reports: FixtureReport[];
  try {
    let built: HookBundle;
    try {
      built = await buildBundle(entry, { executor, cwd: io.cwd, signal: io.signal });
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
    io.stdout(`${totals(reports.length, passed, failed)} — ${file}\n`);
  }
  return failed > 0 ? EXIT.failed : EXIT.ok;
}

export const testCommand = createTestCommand();

/** `--events` as given, else fixtures.jsonl in the entry's folder (the entry itself when it is a folder). */
async function eventsFileOf(entry: string, events: string | undefined, cwd: string): Promise<string> {
  if (events !== undefined) return resolve(cwd, events);
  return join(await hookFolderOf(entry, cwd), "fixtures.jsonl");
}

async function hookFolderOf(entry: string, cwd: string): Promise<string> {
  const absolute = resolve(cwd, entry);
  const isFolder = await stat(absolute).then(
    (s) => s.isDirectory(),
    () => false,
  );
  return isFolder ? absolute : dirname(absolute);
}

async function readEvents(file: string, cwd: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch {
    throw new CliError(
      `No events file ${shown(file, cwd)}: pass --events <file.jsonl>, or add fixtures.jsonl beside the hook ` +
        '(one JSON line per case: {"point": "tool.call", "event": {…}, "expect": {…}})',
      "no_fixtures",
    );
  }
}

function parseEvents(text: string, file: string) {
  let fixtures: ReturnType<typeof parseFixtures>;
  try {
    fixtures = parseFixtures(text, file);
  } catch (error) {
    if (error instanceof FixtureError) throw new CliError(error.message, error.code);
    throw error;
  }
  if (fixtures.length === 0)
    throw new CliError(`${file} has no event lines: add one JSON line per case`, "no_fixtures");
  return fixtures;
}

async function open(deps: TestCommandDeps, limits: LimitsInput, signal: AbortSignal | undefined) {
  try {
    return await deps.openExecutor(limits, signal);
  } catch (error) {
    if (signal?.aborted) throw new CliError("Aborted", "aborted");
    const reason = error instanceof Error ? error.message : String(error);
    throw new CliError(`Cannot start the sandbox: ${reason}`, "sandbox_unavailable");
  }
}

function shown(file: string, cwd: string): string {
  return relative(cwd, file) || "."; // the folder itself when it is the working directory
}

/** One `--json` result: the outcome object (DESIGN §4) plus where it came from and what it cost. */
function jsonLine(report: FixtureReport): Record<string, unknown> {
  const { line, name, point, outcome, durationMs, cpuMs, passed, mismatch } = report;
  return {
    line,
    ...(name === undefined ? {} : { name }),
    point,
    ...outcome,
    durationMs: round(durationMs),
    cpuMs: round(cpuMs),
    ...(passed === undefined ? {} : { passed }),
    ...(mismatch === undefined ? {} : { mismatch }),
  };
}

function readableLine(report: FixtureReport): string {
  const { outcome } = report;
  const mark = report.passed === undefined ? "    " : report.passed ? "ok  " : "FAIL";
  const label = report.name === undefined ? "" : ` ${report.name}:`;
  let what: string;
  if (outcome.type === "failed") what = `failed ${failureText(outcome.failure)}`;
  else if (outcome.result === null) what = "no-op";
  else {
    const { type, ...fields } = outcome.result;
    what = Object.keys(fields).length === 0 ? type : `${type} ${clip(JSON.stringify(fields))}`;
  }
  const lines = [`${mark} line ${report.line} ${report.point}${label} → ${what} (${round(report.durationMs)} ms)`];
  if (outcome.type === "failed") {
    for (const frame of outcome.failure.stack ?? []) {
      const at = `${frame.file}:${frame.line}:${frame.column}`;
      lines.push(`       at ${frame.name === undefined ? at : `${clip(frame.name)} (${at})`}`);
    }
  }
  if (report.mismatch !== undefined) lines.push(`       ${report.mismatch}`);
  for (const log of outcome.logs) lines.push(`       | ${clip(log)}`);
  return `${lines.join("\n")}\n`;
}

function totals(total: number, passed: number, failed: number): string {
  const unchecked = total - passed - failed;
  const parts = [`${passed} passed`, `${failed} failed`];
  if (unchecked > 0) parts.push(`${unchecked} without expect`);
  return parts.join(", ");
}

function clip(text: string): string {
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
