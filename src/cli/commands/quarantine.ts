import type { QuarantineRecord } from "../../store/index.js";
import { line, printable } from "../../terminal/index.js";
import { type CliIO, type Command, EXIT, integerFlag, UsageError, writeJson } from "../command.js";
import { BY_HELP, BY_OPTION, STORE_HELP, STORE_OPTION, tenantFlag, uploaderOf, withStore } from "../store-option.js";
import { shortHash, textTable } from "../text-table.js";

const HELP = `Usage: isohook quarantine list [--tenant <id>] [--all] [--store <path|url>] [--json]
       isohook quarantine release --tenant <id> --version <n> [--by <name>] [--store <path|url>] [--json]

A bundle whose calls keep failing in the sandbox (timeouts the tenant caused, memory limits, crashes) is
quarantined: its calls are not made and count as failed under the hook point's policy, for a cooldown
that doubles with each entry. Every host on one store shares the book: the failures of all hosts count
together, and an entry reaches every host within about a second.

list      Bundles in quarantine now: tenant, bundle, the versions that run it, the strike (how many times it
          entered; the cooldown doubles each time), the failures and their codes, since and until, and the
          hosts whose failures put it there. --all shows ended and released entries too.
release   Lifts the quarantine of the bundle of --version before its end (once the tenant shipped a fix,
          or the cause was the platform's). Every host lets its calls through again as soon as it hears,
          the way it picks up an activation. Audited (\`isohook audit\`, action "release").

Options:
  --tenant <id>      The tenant (required for release)
  --version <n>      The version whose bundle to release
  --all              list: include entries that ended or were released
${BY_HELP}
${STORE_HELP}
  --json             list: {"quarantines": [...]}; release: the released entry
  -h, --help         Show this help

Exit codes: 0 done, 1 not in quarantine, no such version, or the store failed, 2 usage.
`;

export const quarantineCommand: Command = {
  name: "quarantine",
  summary: "List the bundles in quarantine on every host, or lift one",
  help: HELP,
  options: {
    tenant: { type: "string" },
    version: { type: "string" },
    all: { type: "boolean" },
    ...BY_OPTION,
    ...STORE_OPTION,
  },
  allowPositionals: true,
  async run(args, io) {
    const [action, ...rest] = args.positionals;
    if (rest.length > 0 || (action !== "list" && action !== "release"))
      throw new UsageError(
        `Expected \`quarantine list\` or \`quarantine release\`, got ${JSON.stringify(args.positionals.join(" "))}`,
      );
    if (action === "list") {
      if (args.values.version !== undefined || args.values.by !== undefined)
        throw new UsageError("--version and --by go with `quarantine release`");
      const tenantId = tenantFlag(args, false);
      const all = args.values.all === true;
      const entries = await withStore(args, io, { create: false }, (store) =>
        store.quarantine.list({ ...(tenantId ? { tenantId } : {}), all }, io.signal),
      );
      if (args.json) writeJson(io, { quarantines: entries.map(quarantineJson) });
      else printList(io, entries, all);
      return EXIT.ok;
    }
    if (args.values.all !== undefined) throw new UsageError("--all goes with `quarantine list`");
    const tenantId = tenantFlag(args, true);
    const version = integerFlag(args, "version", 1, Number.MAX_SAFE_INTEGER);
    if (version === undefined) throw new UsageError("Pass --version <n>: the version whose bundle to release");
    const by = uploaderOf(args, io);
    const released = await withStore(args, io, { create: false }, (store) =>
      store.quarantine.release({ tenantId, version, by }, io.signal),
    );
    if (args.json) writeJson(io, quarantineJson(released));
    else
      io.stdout(
        line`${tenantId}: the quarantine of v${version} (${shortHash(released.bundleHash)}, strike ${released.strike}) is lifted; every host lets its calls through again as it hears.\n`,
      );
    return EXIT.ok;
  },
};

/** An entry as `--json` prints it: times as ISO strings. */
function quarantineJson(entry: QuarantineRecord) {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    tenantId: entry.tenantId,
    hash: entry.bundleHash,
    versions: entry.versions,
    strike: entry.strike,
    failures: entry.failures,
    codes: entry.codes,
    since: iso(entry.since),
    until: iso(entry.until),
    hosts: entry.hosts,
    releasedAt: entry.releasedAt === null ? null : iso(entry.releasedAt),
    releasedBy: entry.releasedBy,
  };
}

function printList(io: CliIO, entries: readonly QuarantineRecord[], all: boolean): void {
  if (entries.length === 0) {
    io.stdout(all ? line`No bundle was ever quarantined.\n` : line`No bundle is in quarantine.\n`);
    return;
  }
  const now = Date.now();
  io.stdout(
    textTable(
      [
        "TENANT",
        "BUNDLE",
        "VERSIONS",
        "STRIKE",
        "FAILURES",
        "CODES",
        "SINCE",
        "UNTIL",
        "HOSTS",
        ...(all ? ["STATE"] : []),
      ],
      entries.map((e) => [
        e.tenantId,
        shortHash(e.bundleHash),
        e.versions.map((v) => `v${v}`).join(",") || "-",
        String(e.strike),
        String(e.failures),
        e.codes.join(","),
        new Date(e.since).toISOString(),
        new Date(e.until).toISOString(),
        printable(e.hosts.join(",")),
        ...(all ? [stateOf(e, now)] : []),
      ]),
    ),
  );
}

function stateOf(entry: QuarantineRecord, now: number): string {
  if (entry.releasedAt !== null) return `released by ${printable(entry.releasedBy ?? "")}`;
  return now < entry.until ? "in force" : "ended";
}
