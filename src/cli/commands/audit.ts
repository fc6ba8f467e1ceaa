import type { AuditEntry } from "../../store/index.js";
import { type Command, EXIT, integerFlag, writeJson } from "../command.js";
import { STORE_HELP, STORE_OPTION, tenantFlag, withStore } from "../store-option.js";
import { shortHash, textTable } from "../text-table.js";

export const auditCommand: Command = {
  name: "audit",
  summary: "Show the audit log of uploads, activations, rollbacks and deletions",
  help: `Usage: isohook audit [--tenant <id>] [--limit <n>] [--store <path>] [--json]

Prints the store's audit log, oldest first: every upload, activation, rollback, deletion, rollout and
shadow-mode change, with who did it, when, the version and (for activations and rollbacks) the version
active before. A rollout shows its share (\`rollout 50 %\`, FROM the active version beside it); the
activation that completed one \`activate (rollout 100 %)\`; a rollback that ended one \`rollback (rollout)\`,
with VERSION the active version every run uses again and FROM the candidate.

Options:
  --tenant <id>      Only this tenant's entries
  --limit <n>        The last <n> entries (1–10000, default 100)
${STORE_HELP}
  --json             One JSON object: {"entries": [{"id", "at", "tenantId", "type", "version",
                     "previousVersion", "hash", "by", "percent"}]}
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
      io.stdout("No audit entries.\n");
      return EXIT.ok;
    }
    io.stdout(
      textTable(
        ["ID", "AT", "TENANT", "ACTION", "VERSION", "FROM", "BY", "HASH"],
        entries.map((e) => [
          String(e.id),
          e.at,
          e.tenantId,
          actionOf(e),
          `v${e.version}`,
          e.fromVersion === null ? "-" : `v${e.fromVersion}`,
          e.by,
          e.hash === null ? "-" : shortHash(e.hash),
        ]),
      ),
    );
    return EXIT.ok;
  },
};

function actionOf(e: AuditEntry): string {
  if (e.percent === null) return e.type;
  if (e.type === "rollout") return `rollout ${e.percent} %`;
  return e.type === "rollback" ? "rollback (rollout)" : `${e.type} (rollout ${e.percent} %)`;
}
