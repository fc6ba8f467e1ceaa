import { line } from "../../terminal/index.js";
import { type Command, EXIT, integerFlag, UsageError, writeJson } from "../command.js";
import { activationJson } from "../json-output-rollout.js";
import { BY_HELP, BY_OPTION, STORE_HELP, STORE_OPTION, tenantFlag, uploaderOf, withStore } from "../store-option.js";

export const activateCommand: Command = {
  name: "activate",
  summary: "Make one of a tenant's stored versions the active one",
  help: `Usage: isohook activate --tenant <id> --version <n> [--by <name>] [--store <path>] [--json]

Makes version <n> the tenant's active bundle. Running runtimes pick it up within their refresh interval
(default 500 ms) without a restart; runs already under way keep the version they started with.
Activating the version that is already active changes nothing (unless it ends a rollout in progress:
any activation does). Undo with \`isohook rollback\`.

Options:
  --tenant <id>      The tenant (required)
  --version <n>      The version to activate (required; see \`isohook versions --tenant <id>\`)
${BY_HELP}
${STORE_HELP}
  --json             The result as JSON: {"tenantId", "version", "previousVersion", "changed",
                     "endedRollout"} (the rollout it ended, or null)
  -h, --help         Show this help

Exit codes: 0 active (or already was), 1 no such version or the store failed, 2 usage.
`,
  options: { tenant: { type: "string" }, version: { type: "string" }, ...BY_OPTION, ...STORE_OPTION },
  allowPositionals: false,
  async run(args, io) {
    const tenantId = tenantFlag(args, true);
    const version = integerFlag(args, "version", 1, Number.MAX_SAFE_INTEGER);
    if (version === undefined) throw new UsageError("Missing --version");
    const by = uploaderOf(args, io);
    const result = await withStore(args, io, { create: false }, (store) =>
      store.activate({ tenantId, version, by }, io.signal),
    );
    if (args.json) writeJson(io, activationJson(result));
    else if (!result.changed) io.stdout(line`${tenantId}: version ${version} was already active; nothing changed.\n`);
    else {
      const ended = result.endedRollout
        ? `; the rollout of v${result.endedRollout.version} (${result.endedRollout.percent} %) ended`
        : "";
      io.stdout(
        line`${tenantId}: version ${version} is active (was ${result.previous === null ? "none" : `v${result.previous}`})${ended}.\n`,
      );
    }
    return EXIT.ok;
  },
};
