import { type Command, EXIT, writeJson } from "../command.js";
import { STORE_HELP, STORE_OPTION, tenantFlag, withStore } from "../store-option.js";
import { formatBytes, shortHash, textTable } from "../text-table.js";

export const versionsCommand: Command = {
  name: "versions",
  summary: "List a tenant's bundle versions, marking the active one",
  help: `Usage: isohook versions --tenant <id> [--store <path>] [--json]

Lists every stored version of a tenant's hook bundle, oldest first. The active version (what runs now) is
marked with *; a version being rolled out shows its share of runs, \`(rollout 50 %)\`, and a version in
shadow mode \`(shadow)\`. Activate another with \`isohook activate\`, go back with \`isohook rollback\`.

Options:
  --tenant <id>      The tenant (required)
${STORE_HELP}
  --json             One JSON object: {"tenantId", "versions": [...]}
  -h, --help         Show this help

Exit codes: 0 listed, 1 the store cannot be read, 2 usage.
`,
  options: { tenant: { type: "string" }, ...STORE_OPTION },
  allowPositionals: false,
  async run(args, io) {
    const tenantId = tenantFlag(args, true);
    const versions = await withStore(args, io, { create: false }, (store) => store.versions(tenantId, io.signal));
    if (args.json) {
      writeJson(io, { tenantId, versions });
      return EXIT.ok;
    }
    io.stdout(
      textTable(
        ["VERSION", "HASH", "SIZE", "HOOK POINTS", "UPLOADED BY", "UPLOADED AT"],
        versions.map((v) => [
          `${v.active ? "*" : " "}v${v.version}${roleOf(v)}`,
          shortHash(v.hash),
          formatBytes(v.bytes),
          v.hookPoints.join(",") || "-",
          v.uploadedBy,
          v.uploadedAt,
        ]),
      ),
    );
    return EXIT.ok;
  },
};

/** ` (rollout 50 %)`, ` (shadow)`, ` (rollout 50 %, shadow)`, or nothing. */
export function roleOf(v: { readonly rolloutPercent: number | null; readonly shadow: boolean }): string {
  const roles = [
    ...(v.rolloutPercent === null ? [] : [`rollout ${v.rolloutPercent} %`]),
    ...(v.shadow ? ["shadow"] : []),
  ];
  return roles.length === 0 ? "" : ` (${roles.join(", ")})`;
}
