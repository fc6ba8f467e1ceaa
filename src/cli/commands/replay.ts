import {
  type ComparisonReport,
  formatComparison,
  type ReplayRecord,
  replayDecisions,
  replayRecordOf,
  replayRecordOfLine,
  viewOf,
} from "../../decisionlog/index.js";
import { type ActiveBundle, parseLimits, type TenantId } from "../../protocol/index.js";
import type { BundleStore } from "../../store/index.js";
import { line, lines, printable } from "../../terminal/index.js";
import {
  CliError,
  type Command,
  EXIT,
  failedVerdict,
  integerFlag,
  stringFlag,
  UsageError,
  writeJson,
} from "../command.js";
import { logOffHint, sinceFlag } from "../decision-options.js";
import { LIMIT_OPTIONS, LIMITS_HELP, limitsOf } from "../limit-options.js";
import { readOperatorFile } from "../operator-file.js";
import { openSandbox, processSandbox, type SandboxDeps } from "../sandbox-option.js";
import { STORE_HELP, STORE_OPTION, tenantFlag, withStore } from "../store-option.js";

const HELP = `Usage: isohook replay --tenant <id> --version <n> [--from <decisions.jsonl> | --since <time>] [--limit <n>]
                     [--fail-on-diff] [--timeout ms] [--memory mb] [--store <path>] [--json]

Runs recorded hook calls through version <n> of the tenant's bundle in the real process sandbox, each
with the event and ctx it saw then (run id, turn, and the hook's state at that call), and compares what
<n> decides with what was decided: calls compared, agreed and differed (by point and by outcome),
failures by code, run time p50/p99 of each side, and the first differing events in full. The records come
from the decision log (\`isohook log --tenant <id> --on\`), or from a file written by
\`isohook decisions --export\`. Version <n> need not be active: replay it before \`isohook activate\`.

Options:
  --tenant <id>        The tenant (required)
  --version <n>        The version to replay against (required)
  --from <file>        Replay the lines of this export instead of the log
  --since <time>       Only calls recorded at or after an ISO time or an age (30m, 2h, 7d)
  --limit <n>          The last <n> recorded calls (1–100000, default 1000)
  --fail-on-diff       Exit 1 when any decision changed (a gate for a deploy pipeline)
${LIMITS_HELP}
${STORE_HELP}
  --json               One JSON object: {"tenantId", "version", "source", "report"}; with --fail-on-diff and
                       a change, then {"error": {"code": "decisions_changed", "message"}}
  -h, --help           Show this help

Exit codes: 0 replayed (no change, or changes without --fail-on-diff), 1 a decision changed with
--fail-on-diff, or there was nothing to replay with --fail-on-diff, or the version, file or store cannot
be read, 2 usage.
`;

export function createReplayCommand(deps: SandboxDeps = processSandbox): Command {
  return {
    name: "replay",
    summary: "Run recorded hook calls through another version and compare the decisions",
    help: HELP,
    options: {
      tenant: { type: "string" },
      version: { type: "string" },
      from: { type: "string" },
      since: { type: "string" },
      limit: { type: "string" },
      "fail-on-diff": { type: "boolean" },
      ...LIMIT_OPTIONS,
      ...STORE_OPTION,
    },
    allowPositionals: false,
    async run(args, io) {
      const tenantId = tenantFlag(args, true);
      const version = integerFlag(args, "version", 1, Number.MAX_SAFE_INTEGER);
      if (version === undefined) throw new UsageError("Missing --version");
      const from = stringFlag(args, "from");
      const since = sinceFlag(args, Date.now());
      if (from !== undefined && since !== undefined) throw new UsageError("Pass --from or --since, not both");
      const limit = integerFlag(args, "limit", 1, 100_000) ?? 1_000;
      const limits = parseLimits(limitsOf(args), (message) => new UsageError(message));
      const fileRecords = from === undefined ? undefined : await readExport(io.cwd, from);
      const { candidate, records, hint } = await withStore(args, io, { create: false }, async (store) => {
        const candidate = await candidateOf(store, tenantId, version, io.signal);
        const records =
          fileRecords ??
          (await store.decisions({ tenantId, limit, ...(since !== undefined ? { since } : {}) }, io.signal))
            .map(viewOf)
            .map(replayRecordOf);
        const hint = records.length === 0 && from === undefined ? await logOffHint(store, tenantId, io.signal) : "";
        return { candidate, records, hint };
      });
      // A gate that compared nothing has not passed: a pipeline would read exit 0 as "no decision changed".
      if (records.length === 0 && args.values["fail-on-diff"] === true)
        throw new CliError(
          `Nothing to replay: ${from === undefined ? `no recorded calls of ${tenantId}` : `${printable(from)} has no calls`}, so --fail-on-diff cannot vouch for v${version}.${hint === "" ? "" : ` ${hint}, run the agent, then replay.`}`,
          "nothing_replayed",
        );
      if (records.length === 0 && !args.json)
        io.stderr(
          line`isohook replay: warning: no calls to replay, nothing was compared.${hint === "" ? "" : ` ${hint}.`}\n`,
        );
      const executor = await openSandbox(deps, limits, io.signal);
      let report: ComparisonReport;
      try {
        report = await replayDecisions({ executor, candidate, records, limits, signal: io.signal });
      } finally {
        await executor.close();
      }
      const source = from === undefined ? "log" : "file";
      const changed = report.differed > 0;
      const gate = changed && args.values["fail-on-diff"] === true;
      const summary = `${report.differed} decision${report.differed === 1 ? "" : "s"} of ${tenantId} changed under v${version}`;
      if (args.json) {
        writeJson(io, { tenantId, version, source, report });
        return gate ? failedVerdict(io, args, "decisions_changed", summary) : EXIT.ok;
      }
      if (gate) {
        const lines = formatComparison(report, { baseline: "recorded", candidate: `v${version}` });
        throw new CliError([`${summary}:`, ...lines].join("\n"), "decisions_changed");
      }
      const what = from === undefined ? "recorded calls" : `calls from ${from}`;
      io.stdout(
        lines([
          line`replay ${tenantId} v${version} against ${records.length} ${what}`,
          ...formatComparison(report, { baseline: "recorded", candidate: `v${version}` }),
        ]),
      );
      return EXIT.ok;
    },
  };
}

export const replayCommand = createReplayCommand();

/** The stored version with its code and config, as the runtime would serve it. */
export async function candidateOf(
  store: BundleStore,
  tenantId: TenantId,
  version: number,
  signal: AbortSignal | undefined,
): Promise<ActiveBundle> {
  const detail = await store.version(tenantId, version, signal);
  if (detail === undefined)
    throw new CliError(
      `${tenantId} has no version ${version}: see \`isohook versions --tenant ${tenantId}\``,
      "not_found",
    );
  const bundle = await store.bundle(detail.hash, signal);
  if (bundle === undefined)
    throw new CliError(`The bundle of ${tenantId} v${version} is missing from the store`, "corrupt");
  return { tenantId, version, code: bundle.code, manifest: detail.manifest, config: detail.config };
}

/** An export file's lines; a bad line stops the replay naming it. */
async function readExport(cwd: string, shown: string): Promise<ReplayRecord[]> {
  const text = await readOperatorFile(cwd, shown, "the export", 64 * 1024 * 1024);
  const records: ReplayRecord[] = [];
  const lines = text.split("\n");
  for (const [index, raw] of lines.entries()) {
    if (raw.trim() === "") continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = undefined;
    }
    const record = parsed === undefined ? "not JSON" : replayRecordOfLine(parsed);
    if (typeof record === "string")
      throw new CliError(
        `${printable(shown)}:${index + 1}: ${printable(record)}. Write the file with \`isohook decisions --export\`.`,
        "invalid_events",
      );
    records.push(record);
  }
  return records;
}
