import { line } from "../../terminal/index.js";
import { type Command, EXIT, writeJson } from "../command.js";
import { activationJson } from "../json-output-rollout.js";
import { BY_HELP, BY_OPTION, STORE_HELP, STORE_OPTION, tenantFlag, uploaderOf, withStore } from "../store-option.js";

export const rollbackCommand: Command = {
  name: "rollback",
  summary: "End a rollout in progress, or return a tenant to the version that was active before",
  help: `Usage: isohook rollback --tenant <id> [--by <name>] [--store <path>] [--json]

With a rollout in progress (\`isohook rollout\`): ends it, and every run uses the active version again;
the active version does not change. Otherwise: re-activates the version that was active before the
current activation; repeated rollbacks walk further back through the activation history. Fails (exit 1)
when there is nothing earlier to return to.

Options:
  --tenant <id>      The tenant (required)
${BY_HELP}
${STORE_HELP}
  --json             The result as JSON: {"tenantId", "version", "previousVersion", "changed",
                     "endedRollout"} (the rollout it ended, or null)
  -h, --help         Show this help

Exit codes: 0 rolled back, 1 nothing earlier to return to or the store failed, 2 usage.
`,
  options: { tenant: { type: "string" }, ...BY_OPTION, ...STORE_OPTION },
  allowPositionals: false,
  async run(args, io) {
    const tenantId = tenantFlag(args, true);
    const by = uploaderOf(args, io);
    const result = await withStore(args, io, { create: false }, (store) => store.rollback({ tenantId, by }, io.signal));
    if (args.json) writeJson(io, activationJson(result));
    else if (result.endedRollout)
      io.stdout(
        line`${tenantId}: rollout of v${result.endedRollout.version} (${result.endedRollout.percent} %) ended; every run uses version ${result.version} again.\n`,
      );
    else io.stdout(line`${tenantId}: rolled back to version ${result.version} (from v${result.previous}).\n`);
    return EXIT.ok;
  },
};
