/**
 * The worker a tenant's calls go to: FNV-1a over the id's UTF-16 code units, modulo the worker count.
 * Stable across processes and restarts, so a tenant's warm isolate stays on one worker.
 */
export function shardOf(tenantId: string, workers: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < tenantId.length; i++) {
    hash ^= tenantId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % workers;
}
