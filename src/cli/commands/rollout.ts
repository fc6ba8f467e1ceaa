import { line } from "../../terminal/index.js";
import { type Command, EXIT, integerFlag, stringFlag, UsageError, writeJson } from "../command.js";
import { BY_HELP, BY_OPTION, STORE_HELP, STORE_OPTION, tenantFlag, uploaderOf, withStore } from "../store-option.js";

export const rolloutCommand: Command = {
  name: "rollout",
  summary: "Roll a version out to a stable share of a tenant's runs",
  help: `Usage: isohook rollout --tenant <id> --version <n> --percent <p> [--by <name>] [--store <path>] [--json]

Starts (or changes) a percentage rollout: <p> % of the tenant's runs use version <n>, the others the
active version. Which runs is decided by a hash of the run id (SHA-256 of tenant and run id, 10,000
buckets), so the same run id gets the same version on every host, and raising the share keeps the runs it
had. Every hook call's record and the run's result name the version that decided. Running runtimes pick the
change up like an activation (within 500 ms on SQLite, at once on PostgreSQL); runs already under way keep
their version. --percent 100 activates the version and ends the rollout; \`isohook rollback\` ends a
rollout and leaves every run on the active version; \`isohook activate\` ends it too.

Options:
  --tenant <id>      The tenant (required)
  --version <n>      The version to roll out (required; not the active one)
  --percent <p>      Its share of runs: above 0, at most 100, up to two decimals (required)
${BY_HELP}
${STORE_HELP}
  --json             {"tenantId", "version", "percent", "activeVersion", "previousRollout", "activated", "changed"}
  -h, --help         Show this help

Exit codes: 0 rolled out (or already was), 1 no such version, no active version or the store failed, 2 usage.
`,
  options: {
    tenant: { type: "string" },
    version: { type: "string" },
    percent: { type: "string" },
    ...BY_OPTION,
    ...STORE_OPTION,
  },
  allowPositionals: false,
  async run(args, io) {
    const tenantId = tenantFlag(args, true);
    const version = integerFlag(args, "version", 1, Number.MAX_SAFE_INTEGER);
    if (version === undefined) throw new UsageError("Missing --version");
    const percent = percentFlag(stringFlag(args, "percent"));
    const by = uploaderOf(args, io);
    const result = await withStore(args, io, { create: false }, (store) =>
      store.rollout({ tenantId, version, percent, by }, io.signal),
    );
    if (args.json) {
      const { previous, ...rest } = result;
      writeJson(io, { ...rest, previousRollout: previous });
    } else if (result.activated) {
      io.stdout(line`${tenantId}: version ${version} is active for every run (rollout complete).\n`);
    } else if (percent === 100) {
      io.stdout(line`${tenantId}: version ${version} was already active for every run; nothing changed.\n`);
    } else if (!result.changed) {
      io.stdout(line`${tenantId}: version ${version} already had ${percent} % of runs; nothing changed.\n`);
    } else {
      const was = result.previous ? ` (was v${result.previous.version} at ${result.previous.percent} %)` : "";
      io.stdout(
        line`${tenantId}: version ${version} decides ${percent} % of runs, v${result.activeVersion} the others${was}. End it with \`isohook rollback --tenant ${tenantId}\`.\n`,
      );
    }
    return EXIT.ok;
  },
};

/** `--percent`: a decimal above 0 and at most 100 with at most two decimals; anything else is a usage error. */
export function percentFlag(raw: string | undefined): number {
  if (raw === undefined) throw new UsageError("Missing --percent (the share of runs, e.g. --percent 10)");
  const value = Number(raw);
  if (!/^\d+(\.\d{1,2})?$/.test(raw.trim()) || !(value > 0 && value <= 100)) {
    throw new UsageError(
      `Expected --percent to be a number above 0 and at most 100 with at most two decimals (100 activates the version), got \`${raw}\``,
    );
  }
  return value;
}
