import { realpath } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { createHookExecutor } from "../../../sandbox/supervisor/index.js";
import { bundleHook, HookFileError, isInside, type ResolvedEntry, resolveEntry } from "../../bundler/index.js";
import { type Fixture, FixtureError, type FixtureReport, readFixtures, runFixtures } from "../../fixtures/index.js";
import { type HookExecutor, type LimitsInput, TenantId } from "../../protocol/index.js";
import { printable } from "../../terminal/index.js";
import { bundleFailure } from "../bundle-failure.js";
import {
  CliError,
  type Command,
  EXIT,
  integerFlag,
  type ParsedArgs,
  stringFlag,
  UsageError,
  writeJson,
} from "../command.js";

const HELP = `Usage: isohook test <entry> [--events file.jsonl] [--root dir] [--json] [--timeout ms] [--memory mb]

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
  --events <file>   Event lines to run (default: <folder>/fixtures.jsonl)
  --root <dir>      The hook folder, when the entry's folder shares code with siblings inside <dir>
                    (default: the entry's folder; never a folder above it)
  --timeout <ms>    Per-call timeout, 1-60000 (default 50)
  --memory <mb>     Isolate memory limit, 8-2048 (default 32)
  --json            One JSON object per line: the outcome plus line, point, runMs, cpuMs, logs, passed
  -h, --help        Show this help

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
    options: {
      events: { type: "string" },
      root: { type: "string" },
      timeout: { type: "string" },
      memory: { type: "string" },
    },
    allowPositionals: true,
    async run(args, io) {
      const entry = entryOf(args);
      const limits: LimitsInput = {};
      const timeoutMs = integerFlag(args, "timeout", 1, 60_000);
      const memoryMb = integerFlag(args, "memory", 8, 2_048);
      if (timeoutMs !== undefined) limits.timeoutMs = timeoutMs;
      if (memoryMb !== undefined) limits.memoryMb = memoryMb;
      const root = stringFlag(args, "root");
      let hook: ResolvedEntry;
      let built: Awaited<ReturnType<typeof bundleHook>>;
      try {
        hook = await resolveEntry(entry, io.cwd, root);
      } catch (error) {
        return bundleFailure(error, args, io);
      }
      const eventsFile = eventsFileOf(hook, stringFlag(args, "events"), io.cwd);
      const fixtures = await eventsOf(hook, eventsFile, io.cwd);
      try {
        built = await bundleHook(entry, { cwd: io.cwd, root, signal: io.signal });
      } catch (error) {
        return bundleFailure(error, args, io);
      }

      const executor = await open(deps, limits, io.signal);
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
  return relative(cwd, file) || file;
}

/** The `--json` line: the outcome object (DESIGN §4) plus where it came from and what it cost. */
function jsonLine(report: FixtureReport): Record<string, unknown> {
  const { line, name, point, outcome, runMs, cpuMs, passed, mismatch } = report;
  return {
    line,
    ...(name === undefined ? {} : { name }),
    point,
    ...outcome,
    runMs: round(runMs),
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
  const lines = [`${mark} line ${report.line} ${report.point}${label} → ${what} (${round(report.runMs)} ms)`];
  if (report.mismatch !== undefined) lines.push(`       ${report.mismatch}`);
  for (const log of outcome.logs) lines.push(`       | ${clip(log)}`);
  // Names, messages, results and logs are the tenant's: each stays on its own line, escaped.
  return `${lines.map((line) => printable(line)).join("\n")}\n`;
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
