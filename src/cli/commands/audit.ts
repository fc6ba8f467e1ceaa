import { line } from "../../terminal/index.js";
import { type Command, EXIT, integerFlag, writeJson } from "../command.js";
import { STORE_HELP, STORE_OPTION, tenantFlag, withStore } from "../store-option.js";
import { shortHash, textTable } from "../text-table.js";

export const auditCommand: Command = {
  name: "audit",
  summary: "Show the audit log of uploads, activations, rollbacks, rollouts and decision-log changes",
  help: `Usage: isohook audit [--tenant <id>] [--limit <n>] [--store <path>] [--json]

Prints the store's audit log, oldest first: every upload, activation and rollback (and deletion, which
only the library's \`deleteVersion\` makes), with who did it, when, the version and (for activations and rollbacks) the version active before; every change of a
tenant's decision-log settings (action "log", its detail the new settings or "off"); every rollout (its
detail the share, FROM the active version beside it) and shadow-mode change (shadow, shadow_off). An
activation or rollback that ended a rollout says so in its detail (\`rollout of v2 at 50 % ended\`, or
\`rollout complete\` for \`rollout --percent 100\`); a rollback that ended one names the active version,
which every run uses again, and FROM the candidate.

Options:
  --tenant <id>      Only this tenant's entries
  --limit <n>        The last <n> entries (1–10000, default 100)
${STORE_HELP}
  --json             One JSON object: {"entries": [{"id", "at", "tenantId", "type", "version",
                     "previousVersion", "hash", "by", "detail"}]}
  -h, --help         Show this help

Exit codes: 0 shown, 1 the store cannot be read, 2 usage.
`,
  options: { tenant: { type: "string" }, limit: { type: "string" }, ...STORE_OPTION },
  allowPositionals: false,
  async run(args, io) {
    const tenantId = tenantFlag(args, false);
    const limit = integerFlag(args, "limit", 1, 10_000);
    const entries = await withStore(args, io, { create: false }, (store) =>
      store.audit({ ...(tenantId ? { tenantId } : {}), ...(limit ? { limit } : {}) }, io.signal),
    );
    if (args.json) {
      writeJson(io, {
        entries: entries.map(({ fromVersion, ...entry }) => ({ ...entry, previousVersion: fromVersion })),
      });
      return EXIT.ok;
    }
    if (entries.length === 0) {
      io.stdout(line`No audit entries.\n`);
      return EXIT.ok;
    }
    const withDetail = entries.some((e) => e.detail !== null);
    io.stdout(
      textTable(
        ["ID", "AT", "TENANT", "ACTION", "VERSION", "FROM", "BY", "HASH", ...(withDetail ? ["DETAIL"] : [])],
        entries.map((e) => [
          String(e.id),
          e.at,
          e.tenantId,
          e.type,
          e.version === null ? "-" : `v${e.version}`,
          e.fromVersion === null ? "-" : `v${e.fromVersion}`,
          e.by,
          e.hash === null ? "-" : shortHash(e.hash),
          ...(withDetail ? [e.detail ?? ""] : []),
        ]),
      ),
    );
    return EXIT.ok;
  },
};
