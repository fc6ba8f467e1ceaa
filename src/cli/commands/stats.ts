import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { recordOf } from "../../decisionlog/index.js";
import type { TenantId } from "../../protocol/index.js";
import { line } from "../../terminal/index.js";
import {
  CliError,
  type CliIO,
  type Command,
  EXIT,
  type ParsedArgs,
  stringFlag,
  UsageError,
  writeJson,
} from "../command.js";
import { sinceFlag } from "../decision-options.js";
import { STORE_HELP, STORE_OPTION, tenantFlag, withStore } from "../store-option.js";
import { textTable } from "../text-table.js";
import { type Percentiles, StatsLineError, StatsTally, type TenantStats } from "./stats-tally.js";

/** The most records one decision-log query returns (the store's own cap). */
const MAX_DECISION_LIMIT = 100_000;

const HELP = `Usage: isohook stats --tenant <id> [--from <file.jsonl>] [--since <time>] [--store <path>] [--json]

Sums up one tenant's hook calls: how many, the decisions by type, the failures by code, and the p50/p99
of their cost by hook point (run time in the sandbox, CPU time, and what the caller waited: queued +
load + run). The calls come from the store's decision log (the runs it recorded: \`isohook log\` switches
it on and sets the share of runs; the newest ${MAX_DECISION_LIMIT} records at most), or with --from from
a run's trace: the JSON lines of \`isohook run --json\` or \`isohook demo --json\` (their hook.called
events; other lines are skipped).

Options:
  --tenant <id>       The tenant
  --from <file>       Read a run's trace instead, e.g. isohook run --scenario s.json --json > run.jsonl
  --since <time>      Only calls at or after an ISO time (2026-12-03T08:00:00Z) or an age (30s, 15m, 2h, 7d)
${STORE_HELP}
  --json              One JSON object: {"tenantId", "from" (null: the decision log), "since", "calls",
                      "decisions", "failures", "points": [{"point", "calls", "runMs", "cpuMs", "waitedMs"}]},
                      each cost {"p50", "p99"}
  -h, --help          Show this help

Exit codes: 0 shown (also when the tenant made no call), 1 the store or the file cannot be read, or the
file holds a line that is not JSON, 2 usage.
`;

export const statsCommand: Command = {
  name: "stats",
  summary: "Sum up a tenant's hook calls (decision log or a run's trace): decisions, failures, cost by point",
  help: HELP,
  options: { tenant: { type: "string" }, from: { type: "string" }, since: { type: "string" }, ...STORE_OPTION },
  allowPositionals: false,
  async run(args, io) {
    const tenantId = tenantFlag(args, true);
    const from = stringFlag(args, "from");
    const since = sinceFlag(args, Date.now());
    if (from !== undefined && args.values.store !== undefined)
      throw new UsageError("Pass --from (a run's trace) or --store (its decision log), not both");
    const stats =
      from === undefined
        ? await logStats(args, io, tenantId, since)
        : await traceStats(resolve(io.cwd, from), tenantId, since, io.signal);
    const sinceIso = since === undefined ? null : new Date(since).toISOString();
    if (args.json) {
      writeJson(io, { tenantId, from: from ?? null, since: sinceIso, ...stats });
      return EXIT.ok;
    }
    printStats(io, tenantId, from ?? "the decision log", sinceIso, stats);
    return EXIT.ok;
  },
};

/** The tenant's calls the store's decision log recorded (the newest MAX_DECISION_LIMIT). */
async function logStats(
  args: ParsedArgs,
  io: CliIO,
  tenantId: TenantId,
  since: number | undefined,
): Promise<TenantStats> {
  const query = { tenantId, limit: MAX_DECISION_LIMIT, ...(since !== undefined ? { since } : {}) };
  const stored = await withStore(args, io, { create: false }, (store) => store.decisions(query, io.signal));
  const tally = new StatsTally(tenantId, since);
  for (const decision of stored) {
    try {
      tally.addRecord(recordOf(decision), decision.at, decision.id);
    } catch (error) {
      if (!(error instanceof StatsLineError) && !(error instanceof SyntaxError)) throw error;
      throw new CliError(`The decision log of ${tenantId} is damaged: ${error.message}`, "damaged");
    }
  }
  return tally.result();
}

async function traceStats(
  path: string,
  tenantId: string,
  since: number | undefined,
  signal: AbortSignal | undefined,
): Promise<TenantStats> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK).catch((error: NodeJS.ErrnoException) => {
    const why = error.code === "ENOENT" ? "there is no such file" : error.message;
    throw new CliError(
      `Cannot read ${path}: ${why}. Pass the JSON lines of \`isohook run --json\` (or \`demo --json\`)`,
      "unreadable",
    );
  });
  try {
    // A FIFO or a device would block or never end: only a regular file is read.
    if (!(await handle.stat()).isFile()) throw new CliError(`${path} is not a regular file`, "unreadable");
    const tally = new StatsTally(tenantId, since);
    const lines = createInterface({ input: handle.createReadStream({ autoClose: false }), crlfDelay: Infinity });
    let number = 0;
    for await (const line of lines) {
      signal?.throwIfAborted();
      number++;
      try {
        tally.addLine(line, number);
      } catch (error) {
        if (!(error instanceof StatsLineError)) throw error;
        throw new CliError(
          `${path}: ${error.message}. It should hold the JSON lines of \`isohook run --json\``,
          "invalid_trace",
        );
      }
    }
    return tally.result();
  } finally {
    await handle.close();
  }
}

function printStats(io: CliIO, tenantId: string, from: string, since: string | null, stats: TenantStats): void {
  const counts = (record: Record<string, number>) =>
    Object.entries(record)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, n]) => `${key} ${n}`)
      .join(" · ") || "none";
  const window = since === null ? "" : ` since ${since}`;
  io.stdout(line`${tenantId}: ${stats.calls} hook call${stats.calls === 1 ? "" : "s"} in ${from}${window}\n`);
  if (stats.calls === 0) return;
  io.stdout(line`  decisions  ${counts(stats.decisions)}\n  failures   ${counts(stats.failures)}\n`);
  const ms = (p: Percentiles) => [`${p.p50} ms`, `${p.p99} ms`];
  io.stdout(
    textTable(
      ["POINT", "CALLS", "RUN P50", "RUN P99", "CPU P50", "CPU P99", "WAITED P50", "WAITED P99"],
      stats.points.map((p) => [p.point, String(p.calls), ...ms(p.runMs), ...ms(p.cpuMs), ...ms(p.waitedMs)]),
    ),
  );
}
