import { DEFAULT_LOG_SETTINGS, type LogSettings, type MaskRule } from "../../store/index.js";
import { line } from "../../terminal/index.js";
import { type Command, EXIT, integerFlag, type ParsedArgs, stringFlag, UsageError, writeJson } from "../command.js";
import { knownTenant } from "../decision-options.js";
import { BY_HELP, BY_OPTION, STORE_HELP, STORE_OPTION, tenantFlag, uploaderOf, withStore } from "../store-option.js";

export const logCommand: Command = {
  name: "log",
  summary: "Switch a tenant's decision log on or off, or show its settings",
  help: `Usage: isohook log --tenant <id> [--on [--sample <0..1>] [--mask <path>]… [--hash <path>]…
                  [--retain-days <n>] [--retain <n>] | --off] [--by <name>] [--store <path>] [--json]

The decision log records a tenant's hook calls (event, ctx, outcome, result, cost, the bundle version
that decided) in the store, for \`isohook decisions\` and \`isohook replay\`. Runtimes on this store pick a
change up within a second. Off by default; without --on or --off, shows the tenant's settings. Every
change is audited (\`isohook audit\`, action "log").

--on sets exactly the settings given (the others take their defaults). Masks apply before anything is
written: --mask drops the field, --hash replaces it with a salted SHA-256 prefix (equal values stay
comparable; use --mask for secrets). A path starts at event., ctx. or result. and names keys with dots,
* for every key or array item: event.call.args.password, event.result.content, ctx.state.token.

Options:
  --tenant <id>        The tenant (required)
  --on                 Record the tenant's calls
  --off                Stop recording (records already stored stay until their retention ends)
  --sample <0..1>      The share of runs recorded, chosen by a stable hash of the run id (default 1)
  --mask <path>        Drop this field before writing (repeatable)
  --hash <path>        Hash this field before writing (repeatable)
  --retain-days <n>    Delete records older than <n> days (1–3650, default 7)
  --retain <n>         Keep at most <n> records of the tenant, the newest (1–1000000, default 10000)
${BY_HELP}
${STORE_HELP}
  --json             One JSON object: {"tenantId", "settings", "previous", "changed"} (settings null = off)
  -h, --help         Show this help

Exit codes: 0 done (or shown), 1 the store failed, 2 usage.
`,
  options: {
    tenant: { type: "string" },
    on: { type: "boolean" },
    off: { type: "boolean" },
    sample: { type: "string" },
    mask: { type: "string", multiple: true },
    hash: { type: "string", multiple: true },
    "retain-days": { type: "string" },
    retain: { type: "string" },
    ...BY_OPTION,
    ...STORE_OPTION,
  },
  allowPositionals: false,
  async run(args, io) {
    const tenantId = tenantFlag(args, true);
    const on = args.values.on === true;
    const off = args.values.off === true;
    if (on && off) throw new UsageError("Pass --on or --off, not both");
    const settings = on ? settingsOf(args) : undefined;
    if (!on && hasSettingFlags(args)) throw new UsageError("--sample, --mask, --hash and --retain… go with --on");
    if (!on && !off) {
      const [found] = await withStore(args, io, { create: false }, async (store) => {
        await knownTenant(store, tenantId, io.signal);
        return store.logSettings(tenantId, io.signal);
      });
      const current = found === undefined ? null : settingsOnly(found);
      if (args.json) writeJson(io, { tenantId, settings: current, previous: current, changed: false });
      else io.stdout(line`${tenantId}: ${describe(current)}.\n`);
      return EXIT.ok;
    }
    const by = uploaderOf(args, io);
    const change = await withStore(args, io, { create: false }, async (store) => {
      await knownTenant(store, tenantId, io.signal);
      return store.setLogSettings({ tenantId, settings: settings ?? null, by }, io.signal);
    });
    const changed = JSON.stringify(change.settings) !== JSON.stringify(change.previous);
    if (args.json) writeJson(io, { ...change, changed });
    else
      io.stdout(
        line`${tenantId}: ${describe(change.settings)} (was ${describe(change.previous).replace(/^decision log /, "")}).\n`,
      );
    return EXIT.ok;
  },
};

function settingsOf(args: ParsedArgs): LogSettings {
  const rawSample = stringFlag(args, "sample");
  const sample = rawSample === undefined ? DEFAULT_LOG_SETTINGS.sample : Number(rawSample);
  if (!(sample > 0 && sample <= 1))
    throw new UsageError(`Expected --sample to be a share above 0 and at most 1 (e.g. 0.1), got \`${rawSample}\``);
  const paths = (name: string) => ((args.values[name] as string[] | undefined) ?? []).map(String);
  const mask: MaskRule[] = [
    ...paths("mask").map((path) => ({ path, action: "drop" as const })),
    ...paths("hash").map((path) => ({ path, action: "hash" as const })),
  ];
  return {
    sample,
    mask,
    retainDays: integerFlag(args, "retain-days", 1, 3650) ?? DEFAULT_LOG_SETTINGS.retainDays,
    retain: integerFlag(args, "retain", 1, 1_000_000) ?? DEFAULT_LOG_SETTINGS.retain,
  };
}

function hasSettingFlags(args: ParsedArgs): boolean {
  return ["sample", "mask", "hash", "retain-days", "retain"].some((name) => args.values[name] !== undefined);
}

function settingsOnly(settings: LogSettings): LogSettings {
  const { sample, mask, retainDays, retain } = settings;
  return { sample, mask, retainDays, retain };
}

function describe(settings: LogSettings | null): string {
  if (settings === null) return "decision log off";
  const sample = settings.sample === 1 ? "every run" : `${settings.sample * 100} % of runs`;
  const mask = settings.mask.map((m) => `${m.action} ${m.path}`);
  const retain = `kept ${settings.retainDays} day${settings.retainDays === 1 ? "" : "s"}, at most ${settings.retain} records`;
  return `decision log on (${[sample, ...mask, retain].join(", ")})`;
}
