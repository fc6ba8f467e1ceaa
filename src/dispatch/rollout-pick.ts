import { createHash } from "node:crypto";
import type { ActiveBundle, RunId, TenantId } from "../protocol/index.js";

/** Runs fall into 10,000 buckets: a rollout's share is set in steps of 0.01 %. */
export const ROLLOUT_BUCKETS = 10_000;

/**
 * The run's rollout bucket, 0–9,999: the first 32 bits of SHA-256 over the tenant id and the run id,
 * modulo 10,000. The same run id gets the same bucket on every host and in every process, and a share
 * raised from 10 % to 50 % keeps the runs it had (the candidate gets the buckets below the share).
 */
export function rolloutBucket(tenantId: TenantId, runId: RunId): number {
  const digest = createHash("sha256").update(`${tenantId}\n${runId}`, "utf8").digest();
  return digest.readUInt32BE(0) % ROLLOUT_BUCKETS;
}

/**
 * The bundle that decides a run: the rollout's candidate when the run's bucket falls in its share, else
 * the active bundle. One hash per run, none per hook call.
 */
export function decidingBundle(served: ActiveBundle, runId: RunId): ActiveBundle {
  const rollout = served.rollout;
  if (rollout === undefined) return served;
  const share = Math.round(rollout.percent * (ROLLOUT_BUCKETS / 100));
  return rolloutBucket(served.tenantId, runId) < share ? rollout.bundle : served;
}
