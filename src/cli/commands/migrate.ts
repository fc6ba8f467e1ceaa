import { storeLocation } from "../../store/index.js";
import { line } from "../../terminal/index.js";
import { type Command, EXIT, writeJson } from "../command.js";
import { STORE_HELP, STORE_OPTION, storeLocationOf, withStore } from "../store-option.js";

export const migrateCommand: Command = {
  name: "migrate",
  summary: "Create the bundle store or bring its schema up to date",
  help: `Usage: isohook migrate [--store <path|url>] [--json]

Creates the store, or applies the schema migrations this isohook has and the store lacks, then exits.
Hosts and admin commands do the same when they open a store, so this is for operators who migrate
before a deploy. On PostgreSQL the migration runs in one transaction under an advisory lock: hosts that
start meanwhile wait for it, and run it once between them. A store written by a newer isohook, or a
schema that holds other tables, is refused and left untouched.

PostgreSQL stores live in a schema of their own: \`isohook\` unless the URL says ?schema=<name>.

Options:
${STORE_HELP}
  --json             The result as JSON: {"store", "location", "from", "to", "migrated"}
  -h, --help         Show this help

Exit codes: 0 up to date (migrated or already), 1 the store was refused or could not be reached, 2 usage.
`,
  options: { ...STORE_OPTION },
  allowPositionals: false,
  async run(args, io) {
    const location = storeLocationOf(args, io);
    const parsed = storeLocation(location);
    const shown = parsed.label;
    const { from, to } = await withStore(args, io, { create: true }, async (store) => store.migration);
    const result = { store: parsed.kind, location: shown, from, to, migrated: from !== to };
    if (args.json) writeJson(io, result);
    else if (from === to) io.stdout(line`${shown}: schema version ${to}, up to date; nothing changed.\n`);
    else io.stdout(line`${shown}: migrated from schema version ${from} to ${to}.\n`);
    return EXIT.ok;
  },
};
