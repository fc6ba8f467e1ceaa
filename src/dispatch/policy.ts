import { HOOK_POINT_NAMES, type HookPoint } from "../protocol/index.js";
import type { FailurePolicy, PolicyMap } from "./registration.js";
import { DEFAULT_POLICY } from "./rules.js";

/**
 * The policy a registration runs under at every point: what it asked for (else `DEFAULT_POLICY`), raised
 * to `closed` wherever the floor says `closed`. A floor never opens anything.
 */
export function effectivePolicy(
  requested: PolicyMap | undefined,
  floor: PolicyMap | undefined,
): Readonly<Record<HookPoint, FailurePolicy>> {
  if (requested === undefined && floor === undefined) return DEFAULT_POLICY;
  const policy = { ...DEFAULT_POLICY };
  for (const point of HOOK_POINT_NAMES) {
    const asked = requested?.[point] ?? DEFAULT_POLICY[point];
    policy[point] = floor?.[point] === "closed" ? "closed" : asked;
  }
  return policy;
}
