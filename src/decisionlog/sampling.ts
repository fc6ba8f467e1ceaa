/**
 * Whether a run is recorded at a sampling rate: decided per run, by a stable hash of its run id, so a
 * run's calls are recorded together (replay sees each call's `ctx.state` in the order the run built it)
 * and a resumed run is decided as before. The hash is salted so the log's sample is independent of
 * rollout's (also by run-id hash): at 50 % each, the logged runs are not all the candidate's.
 */
export function sampledRun(runId: string, sample: number): boolean {
  if (sample >= 1) return true;
  if (sample <= 0) return false;
  return runShare(runId) < sample;
}

/** FNV-1a (32-bit) of the salted run id, as a share in [0, 1). */
export function runShare(runId: string): number {
  let hash = 0x811c9dc5;
  const salted = `decisionlog\u0000${runId}`;
  for (let i = 0; i < salted.length; i++) {
    hash ^= salted.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) / 0x1_0000_0000;
}
