import { type ComparisonReport, formatComparison } from "../../decisionlog/index.js";
import type { JsonValue } from "../../protocol/index.js";
import { line, lines, type Printed } from "../../terminal/index.js";
import {
  CliError,
  type CliIO,
  type Command,
  EXIT,
  integerFlag,
  type ParsedArgs,
  UsageError,
  writeJson,
} from "../command.js";
import { hookEntryOf } from "../hook-entry.js";
import { lazyExecutor } from "../lazy-executor.js";
import { LIMIT_OPTIONS, LIMITS_HELP, limitsOf } from "../limit-options.js";
import { readOperatorFile } from "../operator-file.js";
import { BY_HELP, BY_OPTION, STORE_HELP, STORE_OPTION, tenantFlag, uploaderOf, withStore } from "../store-option.js";
import { formatBytes, shortHash } from "../text-table.js";

export const uploadCommand: Command = {
  name: "upload",
  summary: "Bundle a hook module, run the deploy gate and store it as a new version",
  help: `Usage: isohook upload --tenant <id> <entry|folder> [--activate] [--config <file.json>] [--root <dir>]
                     [--replay <n> [--fail-on-diff]] [--by <name>] [--store <path>] [--json]

Bundles the hook module (a .ts file, or a folder with index.ts) and runs the deploy gate in the real
sandbox: the bundle must compile, export only known hook points, stay under the size cap, pass every case
in its fixtures.jsonl (beside the entry) and return a valid result within its limits for every event of a
short fuzz of each exported point. If any check fails nothing is stored and every reason is listed.
Otherwise the bundle is stored as the tenant's next version (with the gate report). The store must exist:
create it once with \`isohook migrate --store <path>\` (a mistyped --store is refused, not created).

With --replay <n>, a last step runs the tenant's last <n> calls recorded by the decision log through the
new bundle (as \`isohook replay\` does) and prints what changed: a recorded call the active version decided
and the new one fails rejects the upload; changed decisions reject it only with --fail-on-diff.

The hook folder (the entry's folder, or --root) is the tenant's: the bundle and fixtures.jsonl may only use
regular files inside it (no symlink out, no hard link, no FIFO or device), checked before any sandbox starts.

Options:
  --tenant <id>      The tenant (required)
  --activate         Make the new version active at once (otherwise: \`isohook activate\`)
  --config <file>    The tenant config for this version, a JSON file (hooks see it as ctx.config);
                     default: the config of the tenant's latest version, or {}
  --root <dir>       The hook folder, when the entry's folder shares code with siblings inside <dir>
                     (default: the entry's folder; never a folder above it)
  --seed <n>         Seed of the fuzz, to reproduce a reported failure
  --replay <n>       Replay the tenant's last <n> recorded calls (1–100000) as a gate step
  --fail-on-diff     With --replay: reject the upload when any recorded decision changes
${LIMITS_HELP} for the gate's fixtures and fuzz
${BY_HELP}
${STORE_HELP}
  --json             One JSON object: {"tenantId", "version", "hash", "bytes", "hookPoints", "activated",
                     "report"}; a rejection is {"error": {"code": "gate_rejected", "message", "report"}}
  -h, --help         Show this help

Exit codes: 0 stored, 1 the gate rejected the hook (nothing stored) or the store failed, 2 usage.
`,
  options: {
    tenant: { type: "string" },
    activate: { type: "boolean" },
    config: { type: "string" },
    root: { type: "string" },
    seed: { type: "string" },
    replay: { type: "string" },
    "fail-on-diff": { type: "boolean" },
    ...LIMIT_OPTIONS,
    ...BY_OPTION,
    ...STORE_OPTION,
  },
  allowPositionals: true,
  async run(args, io) {
    const tenantId = tenantFlag(args, true);
    const entry = await hookEntryOf(args, io.cwd);
    const by = uploaderOf(args, io);
    const seed = integerFlag(args, "seed", -(2 ** 31), 2 ** 31 - 1);
    const config = await readConfig(args, io);
    const limits = limitsOf(args);
    const records = integerFlag(args, "replay", 1, 100_000);
    const failOnDiff = args.values["fail-on-diff"] === true;
    if (failOnDiff && records === undefined) throw new UsageError("--fail-on-diff goes with --replay <n>");
    // Loaded on use: the gate pulls in esbuild and the sandbox supervisor, which other commands never need.
    const { deployHook, formatGateReport } = await import("../../gate/index.js");
    const { createHookExecutor } = await import("../../../sandbox/supervisor/index.js");
    // Only `migrate` creates a store: a mistyped --store is refused before the gate runs.
    return withStore(args, io, { create: false }, async (store) => {
      // Started only when the gate first needs it: after it has read and checked the tenant's files.
      const executor = lazyExecutor(() =>
        createHookExecutor({ workers: 1, spareWorker: false, limits, ...(io.signal ? { signal: io.signal } : {}) }),
      );
      try {
        const result = await deployHook({
          store,
          executor,
          entry,
          tenantId,
          by,
          cwd: io.cwd,
          ...(typeof args.values.root === "string" ? { root: args.values.root } : {}),
          activate: args.values.activate === true,
          limits,
          ...(config === undefined ? {} : { config }),
          ...(seed === undefined ? {} : { fuzz: { seed } }),
          ...(records === undefined ? {} : { replay: { records, failOnDiff } }),
          ...(io.signal ? { signal: io.signal } : {}),
        });
        if (result.type === "rejected") {
          const count = result.report.reasons.length;
          throw new CliError(
            [
              `the deploy gate rejected ${entry} (${count} reason${count === 1 ? "" : "s"}); nothing was stored.`,
              ...formatGateReport(result.report).map((line) => `  ${line}`),
              ...replayLines(result.report.replay),
              "Fix the hook or its fixtures.jsonl and upload again.",
            ].join("\n"),
            "gate_rejected",
            { report: result.report },
          );
        }
        const { version, activated } = result.upload;
        if (args.json) {
          const { tenantId: _, hash, bytes, hookPoints } = version;
          const fields = { version: version.version, hash, bytes, hookPoints, activated, report: result.report };
          writeJson(io, { tenantId, ...fields });
          return EXIT.ok;
        }
        const next = activated
          ? "now active"
          : `not active; run \`isohook activate --tenant ${tenantId} --version ${version.version}\``;
        const gate = formatGateReport(result.report);
        io.stdout(
          lines([
            line`Deploy gate ${gate[0]}`,
            ...gate.slice(1).map((text) => line`  ${text}`),
            ...replayLines(result.report.replay),
            line`${tenantId}: stored version ${version.version} (${shortHash(version.hash)}, ${formatBytes(version.bytes)}, hook points: ${version.hookPoints.join(", ")}), ${next}.`,
          ]),
        );
        return EXIT.ok;
      } finally {
        await executor.close();
      }
    });
  },
};

/** The replay step's comparison, under the gate's lines. */
function replayLines(report: ComparisonReport | undefined): Printed[] {
  if (report === undefined || report.differed === 0) return [];
  return formatComparison(report, { baseline: "recorded", candidate: "new" })
    .slice(1)
    .map((text) => line`  ${text}`);
}

/** A config file may be pretty-printed: the store's own cap (64 KiB of compact JSON) applies after parsing. */
const CONFIG_FILE_MAX_BYTES = 1024 * 1024;

async function readConfig(args: ParsedArgs, io: CliIO): Promise<JsonValue | undefined> {
  const file = args.values.config;
  if (typeof file !== "string") return undefined;
  // Often the tenant's file: a FIFO or device must not hang the upload, nor a huge file fill memory.
  const text = await readOperatorFile(io.cwd, file, "the config file", CONFIG_FILE_MAX_BYTES);
  try {
    return JSON.parse(text) as JsonValue;
  } catch (error) {
    throw new CliError(
      `The config file ${file} is not valid JSON (${error instanceof Error ? error.message : String(error)}). Fix it and retry.`,
    );
  }
}
