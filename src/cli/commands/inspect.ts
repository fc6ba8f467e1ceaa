import { line, lines } from "../../terminal/index.js";
import { CliError, type Command, EXIT, integerFlag, writeJson } from "../command.js";
import { STORE_HELP, STORE_OPTION, tenantFlag, withStore } from "../store-option.js";
import { formatBytes } from "../text-table.js";
import { roleOf } from "./versions.js";

export const inspectCommand: Command = {
  name: "inspect",
  summary: "Show one bundle version: manifest, hook points, size, config and gate report",
  help: `Usage: isohook inspect --tenant <id> [--version <n>] [--store <path>] [--json]

Shows one stored version of a tenant's bundle (default: the active one): its hash, size, exported hook
points, SDK version, the entry it was built from, who uploaded it, the tenant config it runs with
(\`ctx.config\`) and the deploy gate's report.

Options:
  --tenant <id>      The tenant (required)
  --version <n>      The version (default: the active version)
${STORE_HELP}
  --json             The version as JSON, with "manifest", "config" and "gateReport"
  -h, --help         Show this help

Exit codes: 0 shown, 1 no such tenant or version, or the store cannot be read, 2 usage.
`,
  options: { tenant: { type: "string" }, version: { type: "string" }, ...STORE_OPTION },
  allowPositionals: false,
  async run(args, io) {
    const tenantId = tenantFlag(args, true);
    const version = integerFlag(args, "version", 1, Number.MAX_SAFE_INTEGER);
    const detail = await withStore(args, io, { create: false }, async (store) => {
      const found = await store.version(tenantId, version, io.signal);
      if (found) return found;
      if (!(await store.tenant(tenantId, io.signal))) {
        throw new CliError(
          `No tenant \`${tenantId}\` in the store. Run \`isohook list\` to see every tenant.`,
          "not_found",
        );
      }
      throw new CliError(
        version === undefined
          ? `Tenant \`${tenantId}\` has no active version. Pass --version <n> (see \`isohook versions --tenant ${tenantId}\`).`
          : `Tenant \`${tenantId}\` has no version ${version}. See \`isohook versions --tenant ${tenantId}\`.`,
        "not_found",
      );
    });
    if (args.json) {
      writeJson(io, detail);
      return EXIT.ok;
    }
    const rows: [string, string][] = [
      ["hash", detail.hash],
      ["size", `${formatBytes(detail.bytes)} (source map ${formatBytes(detail.sourceMapBytes)})`],
      ["hook points", detail.hookPoints.join(", ") || "-"],
      ["sdk version", detail.manifest.sdkVersion],
      ["entry", detail.manifest.entry],
      ["uploaded", `${detail.uploadedAt} by ${detail.uploadedBy}`],
      ["config", JSON.stringify(detail.config)],
    ];
    const { formatGateReport } = await import("../../gate/index.js");
    const gate = formatGateReport(detail.gateReport);
    io.stdout(
      lines([
        line`${tenantId} v${detail.version}${detail.active ? " (active)" : roleOf(detail)}`,
        // The entry, uploader and config are stored text: each stays on its row.
        ...rows.map(([k, v]) => line`  ${k.padEnd(12)} ${v}`),
        line`  ${"gate".padEnd(12)} ${gate[0] ?? ""}`,
        ...gate.slice(1).map((text) => line`  ${"".padEnd(12)} ${text}`),
      ]),
    );
    return EXIT.ok;
  },
};
