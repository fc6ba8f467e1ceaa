import { z } from "zod";
import {
  type ComparedSide,
  compareDecisions,
  comparedSide,
  type DecisionPair,
  formatComparison,
  shadowPairOf,
  viewOf,
} from "../../decisionlog/index.js";
import { HOOK_POINT_NAMES, type HookPoint, JsonObject, JsonValue } from "../../protocol/index.js";
import { line, lines } from "../../terminal/index.js";
import { CliError, type Command, EXIT, integerFlag, stringFlag, UsageError, writeJson } from "../command.js";
import { sinceFlag } from "../decision-options.js";
import { readOperatorFile } from "../operator-file.js";
import { STORE_HELP, STORE_OPTION, tenantFlag, withStore } from "../store-option.js";

/** A run's events file is operator text: read at most this much. */
const MAX_EVENTS_BYTES = 64 * 1024 * 1024;

export const shadowReportCommand: Command = {
  name: "shadow-report",
  summary: "Compare a shadow candidate's decisions with the deciding version's on live calls",
  help: `Usage: isohook shadow-report --tenant <id> [--since <time>] [--limit <n>] [--from <events.jsonl>]
                             [--store <path>] [--json]

Compares the calls a candidate in shadow mode (\`isohook shadow\`) ran beside the deciding version: calls
compared, agreed and differed (by hook point and by outcome), failures of each side by code, run time
p50/p99 of each side, and the first differing events in full — the comparison \`isohook replay\` prints.
Two calls agree when their outcomes (\`noop\`, a result type, \`failed:<code>\`) and results match.

The calls come from the decision log (\`isohook log --tenant <id> --on\`: shadowed calls are recorded
whenever the tenant's log is on, whatever its sampling), or with --from from a file of run events
(the \`hook.shadowed\` lines \`isohook run --json\` prints), which also holds the calls at points only the
candidate has a hook for (the deciding side is then its no-op).

Options:
  --tenant <id>      The tenant (required)
  --since <time>     Only calls recorded at or after this ISO time or age (30m, 2h, 7d)
  --limit <n>        Look at the last <n> records of the log (1–100000, default 1000)
  --from <file>      Read the shadowed calls from a file of run events instead of the log
${STORE_HELP}
  --json             {"tenantId", "source", "report": {"compared", "agreed", "differed", "byPoint",
                     "changes", "failures", "cost", "versions", "differences", …}}
  -h, --help         Show this help

Exit codes: 0 reported (differences included), 1 no shadowed calls found or the store or file failed, 2 usage.
`,
  options: {
    tenant: { type: "string" },
    since: { type: "string" },
    limit: { type: "string" },
    from: { type: "string" },
    ...STORE_OPTION,
  },
  allowPositionals: false,
  async run(args, io) {
    const tenantId = tenantFlag(args, true);
    const from = stringFlag(args, "from");
    const since = sinceFlag(args, Date.now());
    const limit = integerFlag(args, "limit", 1, 100_000) ?? 1_000;
    if (from !== undefined && since !== undefined) throw new UsageError("Pass --from or --since, not both");
    let skipped = 0;
    let pairs: DecisionPair[];
    if (from === undefined) {
      const views = await withStore(args, io, { create: false }, async (store) =>
        (await store.decisions({ tenantId, limit, ...(since !== undefined ? { since } : {}) }, io.signal)).map(viewOf),
      );
      pairs = [];
      for (const view of views) {
        if (view.shadow === null) continue;
        const pair = shadowPairOf(view);
        if (pair === undefined) skipped++;
        else pairs.push(pair);
      }
    } else {
      pairs = shadowedCalls(await readEvents(io.cwd, from), tenantId);
    }
    if (pairs.length === 0) {
      const where =
        from === undefined
          ? `in the decision log${since === undefined ? "" : " since then"}: switch the log on (\`isohook log --tenant ${tenantId} --on\`) and put a version in shadow mode (\`isohook shadow --tenant ${tenantId} --version <n>\`), then let runs go through`
          : `in ${from}: save a run's events while a version is in shadow mode (\`isohook run --scenario <file> --json > ${from}\`)`;
      throw new CliError(`No shadowed calls of tenant \`${tenantId}\` ${where}.`, "no_shadowed_calls");
    }
    const report = compareDecisions(pairs, skipped > 0 ? { skipped: { truncated: skipped } } : {});
    const source = from === undefined ? "log" : "file";
    if (args.json) {
      writeJson(io, { tenantId, source, report });
      return EXIT.ok;
    }
    const versions = (v: readonly number[]) => v.map((n) => `v${n}`).join(", ") || "none";
    const header = line`shadow report for ${tenantId}: ${versions(report.versions.candidate)} in shadow mode beside ${versions(report.versions.baseline)}`;
    io.stdout(lines([header, ...formatComparison(report, { baseline: "active", candidate: "shadow" })]));
    return EXIT.ok;
  },
};

const ShadowedLine = z.looseObject({
  type: z.literal("hook.shadowed"),
  tenantId: z.string(),
  runId: z.string(),
  turn: z.number().int().nonnegative(),
  event: JsonValue,
  record: JsonObject.optional(),
  shadow: JsonObject.and(z.looseObject({ point: z.enum(HOOK_POINT_NAMES as [HookPoint, ...HookPoint[]]) })),
});

/** The `hook.shadowed` lines of the tenant; other lines (other events, other tenants) are skipped. */
function shadowedCalls(lines: readonly unknown[], tenantId: string): DecisionPair[] {
  const pairs: DecisionPair[] = [];
  for (const line of lines) {
    const parsed = ShadowedLine.safeParse(line);
    if (!parsed.success || parsed.data.tenantId !== tenantId) continue;
    const { runId, turn, event, record, shadow } = parsed.data;
    // Where the deciding version has no hook for the point, the run went on with its no-op.
    const baseline: ComparedSide =
      record === undefined
        ? { version: null, outcome: { key: "noop", result: null, failure: null } }
        : comparedSide(record);
    pairs.push({ point: shadow.point, runId, turn, event, baseline, candidate: comparedSide(shadow) });
  }
  return pairs;
}

async function readEvents(cwd: string, path: string): Promise<unknown[]> {
  const text = await readOperatorFile(cwd, path, "the run events", MAX_EVENTS_BYTES);
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
