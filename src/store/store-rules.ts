import type { TenantId } from "../protocol/index.js";
import { StoreError } from "./errors.js";

/** The lifecycle errors both store implementations raise, worded once. */

export function tenantNotFound(tenantId: TenantId): StoreError {
  return new StoreError(
    "not_found",
    `No tenant \`${tenantId}\` in the store. Check the id with \`isohook list\`, or upload its first bundle with \`isohook upload --tenant ${tenantId} <entry>\`.`,
  );
}

export function versionNotFound(tenantId: TenantId, version: number): StoreError {
  return new StoreError(
    "not_found",
    `Tenant \`${tenantId}\` has no version ${version}. List its versions with \`isohook versions --tenant ${tenantId}\`.`,
  );
}

export function noPrevious(tenantId: TenantId): StoreError {
  return new StoreError(
    "no_previous",
    `Tenant \`${tenantId}\` has no earlier activation to roll back to. Activate a version explicitly with \`isohook activate --tenant ${tenantId} --version <n>\`.`,
  );
}

export function activeVersionError(tenantId: TenantId, version: number): StoreError {
  return new StoreError(
    "active_version",
    `Version ${version} is the active version of \`${tenantId}\`: activate or roll back to another version before deleting it.`,
  );
}

export function noActive(tenantId: TenantId): StoreError {
  return new StoreError(
    "no_active",
    `Tenant \`${tenantId}\` has no active version to run a candidate beside. Activate one first with \`isohook activate --tenant ${tenantId} --version <n>\`.`,
  );
}

export function candidateIsActive(tenantId: TenantId, version: number, what: "roll out" | "shadow"): StoreError {
  return new StoreError(
    "active_version",
    `Version ${version} is the active version of \`${tenantId}\`: ${what} a version other than the active one (see \`isohook versions --tenant ${tenantId}\`).`,
  );
}

export function versionInUse(tenantId: TenantId, version: number, role: "rollout" | "shadow"): StoreError {
  const undo =
    role === "rollout"
      ? `end the rollout first with \`isohook rollback --tenant ${tenantId}\``
      : `turn shadow mode off first with \`isohook shadow --tenant ${tenantId} --off\``;
  return new StoreError(
    "in_use",
    `Version ${version} of \`${tenantId}\` is ${role === "rollout" ? "being rolled out" : "in shadow mode"}: ${undo}.`,
  );
}

/** The audit detail of a rollout's share: `50 % of runs`. */
export function shareDetail(basisPoints: number): string {
  return `${basisPoints / 100} % of runs`;
}

/**
 * The audit detail of an activation or rollback that changed a rollout: `rollout complete` for the
 * activation `--percent 100` made, `rollout of v2 at 50 % ended` for one that ended a rollout in progress.
 */
export function rolloutEndDetail(
  ended: { readonly version: number; readonly percent: number } | null,
  completed = false,
): string | undefined {
  if (completed) return "rollout complete";
  return ended ? `rollout of v${ended.version} at ${ended.percent} % ended` : undefined;
}
