import { readFile, stat } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { bundleHook } from "../../bundler/index.js";
import { FixtureError, type FixtureReport, parseFixtures, runFixtures } from "../../fixtures/index.js";
import { TenantId } from "../../protocol/index.js";
import { bundleFailure } from "../bundle-failure.js";
import { CliError, type Command, EXIT, type ParsedArgs, stringFlag, UsageError, writeJson } from "../command.js";
import { LIMITS_OPTIONS, limitsOf, openSandbox, processSandbox, type SandboxDeps } from "../sandbox-option.js";

const HELP = `Usage: isohook test <entry> [--events file.jsonl] [--json] [--timeout ms] [--memory mb]

Bundles a hook module (a .ts file, or a folder containing index.ts) and runs each event line through the
real process sandbox, printing one outcome per line. A line is one JSON object:
  {"point": "tool.call", "event": {…}, "ctx"?: {…partial ctx…}, "expect"?: {…}}
"expect" makes the line a test: {"type": "block"} or {"type": "block", "reason": "…"} matches a result
that contains those fields, {"noop": true} (or {"type": null}) the no-op, {"failure": "timeout"} a failure
code. Without --events, the fixtures.jsonl beside the entry is used.

Options:
  --events <file>   Event lines to run (default: <folder>/fixtures.jsonl)
  --timeout <ms>    Per-call timeout, 1-60000 (default 50)
  --memory <mb>     Isolate memory limit, 8-2048 (default 32)
  --json            One JSON object per line: the outcome plus line, point, durationMs, cpuMs, logs, passed
  -h, --help        Show this help

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
    options: { events: { type: "string" }, ...LIMITS_OPTIONS },
    allowPositionals: true,
    async run(args, io) {
      const entry = entryOf(args);
      const limits = limitsOf(args);
      const eventsFile = await eventsFileOf(entry, stringFlag(args, "events"), io.cwd);
      const fixtures = parseEvents(await readEvents(eventsFile, io.cwd), shown(eventsFile, io.cwd));

      let built: Awaited<ReturnType<typeof bundleHook>>;
      try {
        built = await bundleHook(entry, { cwd: io.cwd, signal: io.signal });
      } catch (error) {
        return bundleFailure(error, args, io);
      }

      const executor = await openSandbox(deps, limits, io.signal);
      let reports: FixtureReport[];
      try {
        reports = await runFixtures({
          executor,
          bundle: { hash: built.hash, code: built.code },
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
      for (const report of reports) {
        if (args.json) writeJson(io, jsonLine(report));
        else io.stdout(readableLine(report));
      }
      const failed = reports.filter((r) => r.passed === false).length;
      if (!args.json) io.stdout(`${totals(reports, failed)} — ${shown(eventsFile, io.cwd)}\n`);
      return failed > 0 ? EXIT.failed : EXIT.ok;
    },
  };
}

export const testCommand = createTestCommand();

function entryOf(args: ParsedArgs): string {
  const [entry, ...rest] = args.positionals;
  if (entry === undefined) throw new UsageError("Missing the hook entry: a .ts file or a folder containing index.ts");
  if (rest.length > 0) throw new UsageError(`Expected one hook entry, got ${args.positionals.length}`);
  return entry;
}

/** `--events` as given, else fixtures.jsonl in the entry's folder (the entry itself when it is a folder). */
async function eventsFileOf(entry: string, events: string | undefined, cwd: string): Promise<string> {
  if (events !== undefined) return resolve(cwd, events);
  const absolute = resolve(cwd, entry);
  const isFolder = await stat(absolute).then(
    (s) => s.isDirectory(),
    () => false,
  );
  return join(isFolder ? absolute : dirname(absolute), "fixtures.jsonl");
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

function shown(file: string, cwd: string): string {
  return relative(cwd, file) || file;
}

/** The `--json` line: the outcome object (DESIGN §4) plus where it came from and what it cost. */
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
  if (outcome.type === "failed") what = `failed ${outcome.failure.code}: ${outcome.failure.message}`;
  else if (outcome.result === null) what = "no-op";
  else {
    const { type, ...fields } = outcome.result;
    what = Object.keys(fields).length === 0 ? type : `${type} ${clip(JSON.stringify(fields))}`;
  }
  const lines = [`${mark} line ${report.line} ${report.point}${label} → ${what} (${round(report.durationMs)} ms)`];
  if (report.mismatch !== undefined) lines.push(`       ${report.mismatch}`);
  for (const log of outcome.logs) lines.push(`       | ${clip(log)}`);
  return `${lines.join("\n")}\n`;
}

function totals(reports: readonly FixtureReport[], failed: number): string {
  const passed = reports.filter((r) => r.passed === true).length;
  const unchecked = reports.length - passed - failed;
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
