import { open } from "node:fs/promises";
import { resolve } from "node:path";
import { type DecisionView, exportLine, outcomeOf, outcomeText, viewOf } from "../../decisionlog/index.js";
import { line } from "../../terminal/index.js";
import { CliError, type Command, EXIT, integerFlag, stringFlag, writeJson } from "../command.js";
import { knownTenant, logOffHint, pointFlag, sinceFlag } from "../decision-options.js";
import { STORE_HELP, STORE_OPTION, tenantFlag, withStore } from "../store-option.js";
import { textTable } from "../text-table.js";

export const decisionsCommand: Command = {
  name: "decisions",
  summary: "List a tenant's recorded hook calls, or export them as events",
  help: `Usage: isohook decisions --tenant <id> [--point <point>] [--since <time>] [--limit <n>]
                        [--export <file.jsonl>] [--store <path>] [--json]

Lists the hook calls the decision log recorded for a tenant (switch it on with \`isohook log\`), oldest
first: when, run and turn, point, the version that decided, the outcome and the run time. Tenant text is
shown escaped; --json carries it exact.

--export writes the records as lines \`isohook test --events <file>\` accepts: point, event, the ctx the
call saw and, for a decided call, the recorded outcome as "expect" (so testing a new version against the
file flags every decision that changed). Records whose event was stored truncated are left out, counted.

Options:
  --tenant <id>        The tenant (required)
  --point <point>      Only calls at this hook point
  --since <time>       Only calls at or after an ISO time (2026-12-03T08:00:00Z) or an age (30m, 2h, 7d)
  --limit <n>          The last <n> matching calls (1–100000, default 100)
  --export <file>      Write the calls to <file> as JSON lines (the file must not exist)
${STORE_HELP}
  --json               One JSON object: {"tenantId", "decisions": [...], "exported"}
  -h, --help           Show this help

Exit codes: 0 listed, 1 the store cannot be read or the file cannot be written, 2 usage.
`,
  options: {
    tenant: { type: "string" },
    point: { type: "string" },
    since: { type: "string" },
    limit: { type: "string" },
    export: { type: "string" },
    ...STORE_OPTION,
  },
  allowPositionals: false,
  async run(args, io) {
    const tenantId = tenantFlag(args, true);
    const point = pointFlag(args);
    const since = sinceFlag(args, Date.now());
    const limit = integerFlag(args, "limit", 1, 100_000);
    const file = stringFlag(args, "export");
    const { stored, hint } = await withStore(args, io, { create: false }, async (store) => {
      await knownTenant(store, tenantId, io.signal);
      const query = {
        tenantId,
        ...(point !== undefined ? { point } : {}),
        ...(since !== undefined ? { since } : {}),
        ...(limit !== undefined ? { limit } : {}),
      };
      const stored = await store.decisions(query, io.signal);
      return { stored, hint: stored.length === 0 ? await logOffHint(store, tenantId, io.signal) : "" };
    });
    const views = stored.map(viewOf);
    const exported = file === undefined ? null : await exportTo(resolve(io.cwd, file), views);
    if (args.json) {
      writeJson(io, { tenantId, decisions: views, exported });
      return EXIT.ok;
    }
    if (views.length === 0)
      io.stdout(
        line`No recorded calls of ${tenantId}${point ? ` at ${point}` : ""}.${hint === "" ? "" : ` ${hint}.`}\n`,
      );
    else
      io.stdout(
        textTable(
          ["ID", "AT", "RUN", "TURN", "POINT", "VERSION", "OUTCOME", "RUN TIME"],
          views.map((v) => [
            String(v.id),
            v.at,
            v.runId,
            String(v.turn),
            v.point,
            `v${v.version}`,
            `${outcomeText(outcomeOf(v.record))}${v.truncated ? ` (event truncated, ${v.eventChars} chars)` : ""}`,
            typeof v.record.runMs === "number" ? `${v.record.runMs.toFixed(2)} ms` : "-",
          ]),
        ),
      );
    if (exported !== null && file !== undefined) {
      const skipped = exported.skipped === 0 ? "" : ` (${exported.skipped} with a truncated event left out)`;
      io.stdout(line`Exported ${exported.lines} line${exported.lines === 1 ? "" : "s"} to ${file}${skipped}.\n`);
    }
    return EXIT.ok;
  },
};

/** Writes the lines to a new file (never over an existing one). */
async function exportTo(
  path: string,
  views: readonly DecisionView[],
): Promise<{ file: string; lines: number; skipped: number }> {
  const lines = views.map(exportLine);
  const kept = lines.filter((line): line is string => line !== undefined);
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, "wx");
    await handle.writeFile(kept.length === 0 ? "" : `${kept.join("\n")}\n`);
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new CliError(
      code === "EEXIST"
        ? `${path} exists already: --export writes a new file; pass another name or remove it`
        : `Cannot write ${path}: ${error instanceof Error ? error.message : String(error)}`,
      "export_failed",
    );
  } finally {
    await handle?.close();
  }
  return { file: path, lines: kept.length, skipped: lines.length - kept.length };
}
