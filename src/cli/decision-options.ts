import { closestName, type HookPoint, type TenantId } from "../protocol/index.js";
import type { BundleStore } from "../store/index.js";
import { CliError, type ParsedArgs, stringFlag, UsageError } from "./command.js";
import { hookPointOf } from "./hook-point-option.js";

const UNITS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** An age such as `90s`, `30m`, `2h`, `7d` in milliseconds, or undefined when `raw` is not one. */
export function ageMs(raw: string): number | undefined {
  const age = /^(\d{1,9})([smhd])$/.exec(raw);
  return age === null ? undefined : Number(age[1]) * (UNITS[age[2] ?? "s"] ?? 1_000);
}

/** `--since <time>`: an ISO 8601 time, or an age such as `30m`, `2h`, `7d` before `now`; ms since the epoch. */
export function sinceFlag(args: ParsedArgs, now: number): number | undefined {
  const raw = stringFlag(args, "since");
  if (raw === undefined) return undefined;
  const age = ageMs(raw);
  if (age !== undefined) return now - age;
  const at = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(at))
    throw new UsageError(
      `Expected --since to be an ISO time (2026-12-03T08:00:00Z) or an age (30m, 2h, 7d), got \`${raw}\``,
    );
  return at;
}

/** `--point <name>`, checked against the hook points. */
export function pointFlag(args: ParsedArgs): HookPoint | undefined {
  const raw = stringFlag(args, "point");
  if (raw === undefined) return undefined;
  return hookPointOf(raw, "--point");
}

/**
 * Refuses a tenant the store has never seen (no version, no log settings, no recorded call): a mistyped
 * `--tenant` would otherwise read as "nothing recorded" or switch on a log nothing writes to. A tenant whose
 * bundles come from elsewhere but whose calls are logged here is known. The message offers the closest
 * known tenant.
 */
export async function knownTenant(store: BundleStore, tenantId: TenantId, signal?: AbortSignal): Promise<void> {
  if ((await store.tenant(tenantId, signal)) !== undefined) return;
  if ((await store.logSettings(tenantId, signal)).length > 0) return;
  if ((await store.decisions({ tenantId, limit: 1 }, signal)).length > 0) return;
  const guess = closestName(
    tenantId,
    (await store.tenants(signal)).map((t) => t.tenantId),
  );
  const hint = guess === undefined ? "" : ` (did you mean \`${guess}\`?)`;
  throw new CliError(
    `The store has no tenant ${tenantId}${hint}: see \`isohook list\`, or upload its first bundle with \`isohook upload --tenant ${tenantId} <entry>\``,
    "unknown_tenant",
  );
}

/** Why a tenant has no recorded calls when its log is off: the hint that says how to switch it on. */
export async function logOffHint(store: BundleStore, tenantId: TenantId, signal?: AbortSignal): Promise<string> {
  const [settings] = await store.logSettings(tenantId, signal);
  return settings === undefined
    ? `The decision log of ${tenantId} is off: switch it on with \`isohook log --tenant ${tenantId} --on\``
    : "";
}
