import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { CliError, type CliIO, type Command, EXIT, stringFlag, UsageError, writeJson } from "../command.js";
import { tenantFlag } from "../store-option.js";
import { textTable } from "../text-table.js";
import { type Percentiles, StatsLineError, StatsTally, type TenantStats } from "./stats-tally.js";

const HELP = `Usage: isohook stats --tenant <id> --from <file.jsonl> [--since <time>] [--json]

Sums up one tenant's hook calls: how many, the decisions by type, the failures by code, and the p50/p99
of their cost by hook point (run time in the sandbox, CPU time, and what the caller waited: queued +
load + run). The calls come from a run's trace: the JSON lines of \`isohook run --json\` or
\`isohook demo --json\` (their hook.called events; other lines are skipped).

Options:
  --tenant <id>       The tenant
  --from <file>       The JSON lines to read, e.g. isohook run --scenario s.json --json > run.jsonl
  --since <time>      Only calls at or after it: an ISO 8601 time, or an age: 30s, 15m, 2h, 7d
  --json              One JSON object: {"tenantId", "from", "since", "calls", "decisions", "failures",
                      "points": [{"point", "calls", "runMs", "cpuMs", "waitedMs"}]}, each cost {"p50", "p99"}
  -h, --help          Show this help

Exit codes: 0 shown (also when the tenant made no call), 1 the file cannot be read or holds a line that
is not JSON, 2 usage.
`;

export const statsCommand: Command = {
  name: "stats",
  summary: "Sum up a tenant's hook calls from a run's trace: decisions, failures, cost by point",
  help: HELP,
  options: { tenant: { type: "string" }, from: { type: "string" }, since: { type: "string" } },
  allowPositionals: false,
  async run(args, io) {
    const tenantId = tenantFlag(args, true);
    const from = stringFlag(args, "from", true);
    const sinceFlag = stringFlag(args, "since");
    const since = sinceFlag === undefined ? undefined : sinceTime(sinceFlag, Date.now());
    const stats = await readStats(resolve(io.cwd, from), tenantId, since, io.signal);
    const sinceIso = since === undefined ? null : new Date(since).toISOString();
    if (args.json) {
      writeJson(io, { tenantId, from, since: sinceIso, ...stats });
      return EXIT.ok;
    }
    printStats(io, tenantId, from, sinceIso, stats);
    return EXIT.ok;
  },
};

/** An ISO time, or an age (`15m`) before `now`, as ms since the epoch. */
export function sinceTime(text: string, now: number): number {
  const age = /^(\d+)(s|m|h|d)$/.exec(text);
  if (age !== null) {
    const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[age[2] as "s" | "m" | "h" | "d"];
    return now - Number(age[1]) * unit;
  }
  const time = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(time)) {
    throw new UsageError(
      `Invalid --since ${JSON.stringify(text)}: give an ISO 8601 time (2026-12-03T08:00:00Z) or an age (30s, 15m, 2h, 7d)`,
    );
  }
  return time;
}

async function readStats(
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
  io.stdout(`${tenantId}: ${stats.calls} hook call${stats.calls === 1 ? "" : "s"} in ${from}${window}\n`);
  if (stats.calls === 0) return;
  io.stdout(`  decisions  ${counts(stats.decisions)}\n  failures   ${counts(stats.failures)}\n`);
  const ms = (p: Percentiles) => [`${p.p50} ms`, `${p.p99} ms`];
  io.stdout(
    textTable(
      ["POINT", "CALLS", "RUN P50", "RUN P99", "CPU P50", "CPU P99", "WAITED P50", "WAITED P99"],
      stats.points.map((p) => [p.point, String(p.calls), ...ms(p.runMs), ...ms(p.cpuMs), ...ms(p.waitedMs)]),
    ),
  );
}
