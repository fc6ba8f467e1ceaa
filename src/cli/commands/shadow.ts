import { line } from "../../terminal/index.js";
import { type Command, EXIT, integerFlag, UsageError, writeJson } from "../command.js";
import { BY_HELP, BY_OPTION, STORE_HELP, STORE_OPTION, tenantFlag, uploaderOf, withStore } from "../store-option.js";

export const shadowCommand: Command = {
  name: "shadow",
  summary: "Run a candidate version beside the active one on live calls, deciding nothing",
  help: `Usage: isohook shadow --tenant <id> (--version <n> | --off) [--by <name>] [--store <path>] [--json]

Puts version <n> in shadow mode: on every live hook call of the tenant's runs, after the version that
decides has been called, the candidate is called with the same event. Its result is discarded: it can
never change a run. It has its own hook-time budget, its own state per run and its own quarantine (its
failures never count against the active bundle). Each call's outcome is recorded next to the deciding
call's (the \`hook.shadowed\` event, and the decision log when it is on); \`isohook shadow-report\` compares
them. Runs that a rollout hands to the candidate itself are not shadowed. Running runtimes pick the change
up like an activation. --off ends shadow mode.

Options:
  --tenant <id>      The tenant (required)
  --version <n>      The version to shadow (not the active one)
  --off              Turn shadow mode off
${BY_HELP}
${STORE_HELP}
  --json             {"tenantId", "version", "previousVersion", "changed"} (version null after --off)
  -h, --help         Show this help

Exit codes: 0 done (or nothing to change), 1 no such version, no active version or the store failed, 2 usage.
`,
  options: {
    tenant: { type: "string" },
    version: { type: "string" },
    off: { type: "boolean" },
    ...BY_OPTION,
    ...STORE_OPTION,
  },
  allowPositionals: false,
  async run(args, io) {
    const tenantId = tenantFlag(args, true);
    const version = integerFlag(args, "version", 1, Number.MAX_SAFE_INTEGER);
    const off = args.values.off === true;
    if (off === (version !== undefined)) throw new UsageError("Pass either --version <n> or --off");
    const by = uploaderOf(args, io);
    const result = await withStore(args, io, { create: false }, (store) =>
      store.shadow({ tenantId, version: version ?? null, by }, io.signal),
    );
    if (args.json) {
      writeJson(io, {
        tenantId: result.tenantId,
        version: result.version,
        previousVersion: result.previous,
        changed: result.changed,
      });
    } else if (result.version === null) {
      io.stdout(
        result.changed
          ? line`${tenantId}: shadow mode is off (was v${result.previous}).\n`
          : line`${tenantId}: shadow mode was off; nothing changed.\n`,
      );
    } else if (!result.changed) {
      io.stdout(line`${tenantId}: version ${result.version} was in shadow mode already; nothing changed.\n`);
    } else {
      const was = result.previous === null ? "" : ` (instead of v${result.previous})`;
      io.stdout(
        line`${tenantId}: version ${result.version} runs in shadow mode${was}: it sees every live call and decides nothing. Compare with \`isohook shadow-report --tenant ${tenantId}\`.\n`,
      );
    }
    return EXIT.ok;
  },
};
