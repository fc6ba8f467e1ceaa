import type { TenantSummary } from "../../store/index.js";
import { line } from "../../terminal/index.js";
import { CliError, type Command, EXIT, writeJson } from "../command.js";
import { STORE_HELP, STORE_OPTION, tenantFlag, withStore } from "../store-option.js";
import { shortHash, textTable } from "../text-table.js";

export const listCommand: Command = {
  name: "list",
  summary: "List tenants with their active and latest bundle versions",
  help: `Usage: isohook list [--tenant <id>] [--store <path>] [--json]

Lists every tenant in the bundle store: the active version (what runs now; with a rollout in progress, the
candidate and its share, \`v1 + v2 at 50 %\`, and a version in shadow mode, \`shadow v3\`), the latest
uploaded version, how many versions are kept and when the tenant last changed.

Options:
  --tenant <id>      Only this tenant
${STORE_HELP}
  --json             One JSON object: {"tenants": [...]}
  -h, --help         Show this help

Exit codes: 0 listed, 1 no such tenant or the store cannot be read, 2 usage.
`,
  options: { tenant: { type: "string" }, ...STORE_OPTION },
  allowPositionals: false,
  async run(args, io) {
    const only = tenantFlag(args, false);
    const tenants = await withStore(args, io, { create: false }, async (store) => {
      if (only === undefined) return store.tenants(io.signal);
      const one = await store.tenant(only, io.signal);
      if (!one)
        throw new CliError(
          `No tenant \`${only}\` in the store. Run \`isohook list\` to see every tenant.`,
          "not_found",
        );
      return [one];
    });
    if (args.json) {
      writeJson(io, { tenants });
      return EXIT.ok;
    }
    if (tenants.length === 0) {
      io.stdout(line`No tenants yet. Upload a bundle with \`isohook upload --tenant <id> <entry>\`.\n`);
      return EXIT.ok;
    }
    io.stdout(
      textTable(
        ["TENANT", "ACTIVE", "HASH", "LATEST", "VERSIONS", "UPDATED"],
        tenants.map((t) => [
          t.tenantId,
          t.activeVersion === null ? "-" : `v${t.activeVersion}${candidatesOf(t)}`,
          t.activeHash === null ? "-" : shortHash(t.activeHash),
          t.latestVersion === null ? "-" : `v${t.latestVersion}`,
          String(t.versionCount),
          t.updatedAt,
        ]),
      ),
    );
    return EXIT.ok;
  },
};

/** ` + v2 at 50 %`, `, shadow v3`: what runs beside the active version. */
function candidatesOf(t: TenantSummary): string {
  const rollout = t.rollout ? ` + v${t.rollout.version} at ${t.rollout.percent} %` : "";
  return `${rollout}${t.shadow ? `, shadow v${t.shadow.version}` : ""}`;
}
