import { HOOK_POINT_NAMES, type HookPoint } from "../protocol/index.js";
import { type ParsedArgs, stringFlag, UsageError } from "./command.js";

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
  if (!(HOOK_POINT_NAMES as string[]).includes(raw))
    throw new UsageError(`Unknown hook point \`${raw}\`: use one of ${HOOK_POINT_NAMES.join(", ")}`);
  return raw as HookPoint;
}
