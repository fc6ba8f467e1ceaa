import type { TenantId } from "../../src/protocol/index.js";
import type { PendingCall } from "./pending-call.js";
import type { RunningCall } from "./running-call.js";
import type { WorkerProcess } from "./worker-process.js";

/**
 * How long a worker's running call may hold the calls of other tenants queued behind it (wall clock, from
 * when it started, as its running mark says) before they are sent to another worker (relief.ts).
 */
export const HOLD_SLICE_MS = 2;

/** A worker held by its running call: whose call it is, and the calls another worker may take over. */
export interface Hold {
  /** The tenant whose call is running; undefined for a describe. Its own calls stay behind it, in order. */
  readonly tenantId: TenantId | undefined;
  /** The running call, and when it started (its phase, as the mark says; `performance.now()` time). */
  readonly entry: PendingCall;
  readonly since: number;
  /** The decision calls of other tenants still waiting on it, by id, oldest first. */
  readonly behind: readonly (readonly [number, PendingCall & { kind: "call" }])[];
}

/**
 * A call named by its worker's mark this long holds the calls behind it whatever its thread does: waits on
 * its own, is starved by the machine, or is done with its answer unread by a busy host (shorter, and a
 * pipelined host on a loaded machine moved calls for nothing; scripts/bench-relief-ab.ts).
 */
export const QUIET_HOLD_MS = 50;
/** A worker thread that waited for a core this share of the time it was watched is starved by the machine. */
export const STARVED_SHARE = 0.5;

/**
 * Whether `worker` is held at `now` by `running`, the call its running mark names (relief.ts reads it): it
 * is ready, has answered nothing for `holdMs` and that call started at least that long ago.
 * `stays(tenantId)`: tenants whose calls are never moved (those the long-call worker serves).
 */
export function holdOf(
  worker: WorkerProcess,
  running: RunningCall,
  now: number,
  holdMs: number,
  stays: (tenantId: TenantId) => boolean,
): Hold | undefined {
  const pending = worker.pending;
  // A worker still booting is not held by a call: its calls wait for it, as they would for any worker.
  if (pending.size < 2 || !worker.ready || now - worker.progressAt < holdMs) return undefined;
  if (now - running.startedAt < holdMs) return undefined;
  const tenantId = running.entry.kind === "call" ? running.entry.call.tenantId : undefined;
  const behind: [number, PendingCall & { kind: "call" }][] = [];
  for (const [id, entry] of pending) {
    if (entry === running.entry || entry.kind !== "call" || entry.answered) continue;
    const call = entry.call;
    // Observe-only calls wait by design (observe-lane.ts); a tenant's own calls keep their order.
    if (call.priority === "observe" || call.tenantId === tenantId || stays(call.tenantId)) continue;
    behind.push([id, entry]);
  }
  return { tenantId, entry: running.entry, since: running.startedAt, behind };
}
