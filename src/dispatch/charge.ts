import { countsTowardsQuarantine, type Failure, type FailureCode, type SandboxCost } from "../protocol/index.js";

/**
 * What a tenant is charged for one sandbox call, in hook time and in quarantine strikes. Time queued behind
 * other calls is never the tenant's; a load is the tenant's only when its own failure caused it (the worker
 * says so: `SandboxCost.loadAfterRecycle`). Why, in docs/architecture.md ("Reloads a tenant causes").
 */

/** The hook time budgets charge: the handler's run, plus the load when the tenant's own failure caused it. */
export function chargedMs(cost: SandboxCost): number {
  return cost.loadAfterRecycle === true ? cost.runMs + (cost.loadMs ?? 0) : cost.runMs;
}

/**
 * The failure code of the quarantine strike a call takes, or undefined: its own failure when that is of a
 * quarantine kind (not a bystander's), else `timeout` when a load the tenant caused made the call outlast
 * `timeoutMs` (the per-call timeout): held to the timeout its calls have, that call timed out. One strike
 * per call, counted `strikeWeight` times.
 */
export function strikeOf(failure: Failure | undefined, cost: SandboxCost, timeoutMs: number): FailureCode | undefined {
  if (failure?.bystander === true) return undefined;
  if (failure !== undefined && countsTowardsQuarantine(failure)) return failure.code;
  if (cost.loadAfterRecycle === true && (cost.loadMs ?? 0) + cost.runMs > timeoutMs) return "timeout";
  return undefined;
}

/**
 * How many failures a struck call counts for in the quarantine window: 1, or, when a load the tenant caused
 * is part of it, one per whole per-call timeout the call held the worker. Quarantine then cuts a tenant off
 * after about K call timeouts of worker time, however that time was spent: a 900 ms reload is 18 timeouts
 * of 50 ms, not one.
 */
export function strikeWeight(cost: SandboxCost, timeoutMs: number): number {
  if (cost.loadAfterRecycle !== true) return 1;
  return Math.max(1, Math.floor(((cost.loadMs ?? 0) + cost.runMs) / timeoutMs));
}
