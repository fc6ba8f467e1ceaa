import { open } from "node:fs/promises";
import { resolve } from "node:path";
import { z } from "zod";
import { HOOK_POINT_NAMES, type HookPoint, JsonValue } from "../../protocol/index.js";
import { CliError, type Command, EXIT, stringFlag, UsageError, writeJson } from "../command.js";
import { compareShadow, formatShadowReport, type ShadowPair } from "../shadow-comparison.js";
import { tenantFlag } from "../store-option.js";

/** A run's events file is operator text: read at most this much. */
const MAX_EVENTS_BYTES = 64 * 1024 * 1024;

export const shadowReportCommand: Command = {
  name: "shadow-report",
  summary: "Compare a shadow candidate's decisions with the deciding version's",
  help: `Usage: isohook shadow-report --tenant <id> --from <events.jsonl> [--json]

Compares every shadowed call of the tenant (\`isohook shadow\`): the calls compared, how many agreed and
differed (by hook point, and by result type: \`noop → rewrite\`), the failures of each side by code, the
run time p50/p99 of each side, and the first differing calls with their events in full. Two calls agree
when they decided the same result (the no-op included) or failed with the same code; where the deciding
version has no hook for the point, it counts as the no-op. The shadowed calls are read from the
\`hook.shadowed\` lines of \`isohook run --json\` output (or any run events a host wrote as JSON lines).

Options:
  --tenant <id>      The tenant (required)
  --from <file>      A file of run events, one JSON object per line (required)
  --json             The report as one JSON object: {"tenantId", "shadowVersions", "activeVersions",
                     "compared", "agreed", "differed", "byPoint", "byResultType", "failures", "cost",
                     "differences"}
  -h, --help         Show this help

Exit codes: 0 reported (differences included), 1 the file cannot be read or holds no shadowed call of
the tenant, 2 usage.
`,
  options: { tenant: { type: "string" }, from: { type: "string" } },
  allowPositionals: false,
  async run(args, io) {
    const tenantId = tenantFlag(args, true);
    const from = stringFlag(args, "from");
    if (from === undefined) throw new UsageError("Missing --from <events.jsonl> (the lines of `isohook run --json`)");
    const pairs = shadowedCalls(await readEvents(resolve(io.cwd, from)), tenantId);
    if (pairs.length === 0) {
      throw new CliError(
        `No shadowed calls of tenant \`${tenantId}\` in ${from}. Put a version in shadow mode with \`isohook shadow --tenant ${tenantId} --version <n>\`, then save a run's events with \`isohook run --scenario <file> --json > ${from}\`.`,
        "no_shadowed_calls",
      );
    }
    const report = compareShadow(tenantId, pairs);
    if (args.json) writeJson(io, report);
    else io.stdout(formatShadowReport(report));
    return EXIT.ok;
  },
};

const Record = z.looseObject({
  point: z.enum(HOOK_POINT_NAMES as [HookPoint, ...HookPoint[]]),
  hookId: z.string(),
  bundle: z.looseObject({ version: z.number(), hash: z.string() }).optional(),
  outcome: z.union([
    z.looseObject({ type: z.literal("decided"), result: z.looseObject({ type: z.string() }).nullable() }),
    z.looseObject({ type: z.literal("failed"), failure: z.looseObject({ code: z.string(), message: z.string() }) }),
  ]),
  runMs: z.number(),
});

const ShadowedLine = z.looseObject({
  type: z.literal("hook.shadowed"),
  tenantId: z.string(),
  runId: z.string(),
  turn: z.number(),
  event: JsonValue,
  record: Record.optional(),
  shadow: Record,
});

/** The `hook.shadowed` lines of the tenant; other lines (other events, other tenants) are skipped. */
function shadowedCalls(lines: readonly unknown[], tenantId: string): ShadowPair[] {
  const pairs: ShadowPair[] = [];
  for (const line of lines) {
    const parsed = ShadowedLine.safeParse(line);
    if (!parsed.success || parsed.data.tenantId !== tenantId) continue;
    const { runId, turn, event, record, shadow } = parsed.data;
    pairs.push({ runId, turn, point: shadow.point, event, record, shadow });
  }
  return pairs;
}

async function readEvents(path: string): Promise<unknown[]> {
  let text: string;
  try {
    const file = await open(path, "r");
    try {
      const stat = await file.stat();
      if (!stat.isFile()) throw new CliError(`${path} is not a regular file: pass a file of run events.`, "not_a_file");
      if (stat.size > MAX_EVENTS_BYTES)
        throw new CliError(`${path} is over ${MAX_EVENTS_BYTES / 1024 / 1024} MiB: split it.`, "too_large");
      text = await file.readFile("utf8");
    } finally {
      await file.close();
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`Cannot read ${path}: ${(error as Error).message}`, "unreadable");
  }
  const lines: unknown[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    try {
      lines.push(JSON.parse(line));
    } catch {
      throw new CliError(
        `${path}:${i + 1} is not JSON: pass the lines \`isohook run --json\` printed.`,
        "invalid_events",
      );
    }
  }
  return lines;
}
