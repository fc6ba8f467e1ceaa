import type { SandboxResult } from "../../src/protocol/index.js";

/**
 * A call that used this much CPU (or a reload it caused that took this long) holds its worker long enough
 * to be felt by the calls queued behind it: its tenant moves to the long-call worker.
 */
export const LONG_CALL_MS = 20;
/** A tenant stays on the long-call worker this long after its last long call. */
export const LONG_TENANT_MS = 60_000;
/** The most tenants remembered as long; past it the one whose term ends first is forgotten. */
const MAX_LONG_TENANTS = 10_000;

/**
 * The tenants whose calls run long, and until when: their calls go to a worker of their own kind (the
 * long-call worker) instead of their shard's, so a tenant that spins or computes for tens of ms holds
 * only other long-running tenants' calls, never the short calls of the tenants sharing its shard. A
 * tenant is moved after its first long call (that call and those already queued behind it on the shard
 * worker still wait) and moves back `LONG_TENANT_MS` after its last one.
 */
export class LongCallTenants {
  readonly #until = new Map<string, number>();

  /** Whether `tenantId`'s calls go to the long-call worker at `now`. */
  isLong(tenantId: string, now: number): boolean {
    if (this.#until.size === 0) return false;
    const until = this.#until.get(tenantId);
    if (until === undefined) return false;
    if (until > now) return true;
    this.#until.delete(tenantId);
    return false;
  }

  /** Hears every decision call's result; a long one moves (or keeps) its tenant on the long-call worker. */
  settled(tenantId: string, result: SandboxResult, now: number): void {
    if (!isLongCall(result)) return;
    this.#until.delete(tenantId);
    if (this.#until.size >= MAX_LONG_TENANTS) {
      const [oldest] = this.#until.keys();
      if (oldest !== undefined) this.#until.delete(oldest);
    }
    this.#until.set(tenantId, now + LONG_TENANT_MS);
  }
}

/**
 * The call's own CPU time (not its wall time, which a busy machine stretches), or a reload its tenant
 * caused by the clock (the bundle's top-level code: the pool measures loads by the clock only). A call its
 * worker died under is not one: the host stands in for its cost, and the worker is replaced anyway.
 */
function isLongCall(result: SandboxResult): boolean {
  if (result.type === "failed" && result.failure.code === "sandbox_crashed") return false;
  return result.cpuMs >= LONG_CALL_MS || (result.loadAfterRecycle === true && (result.loadMs ?? 0) >= LONG_CALL_MS);
}
