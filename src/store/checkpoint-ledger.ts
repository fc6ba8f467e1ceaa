import type { TenantId } from "../protocol/index.js";
import { StoreError } from "./errors.js";

/** A checkpoint being resumed: its id and, for the retention of the id, when the checkpoint expires. */
export interface ResumeClaim {
  /** The checkpoint's id (a UUID from its sealed body). */
  readonly id: string;
  readonly tenantId: TenantId;
  readonly runId: string;
  /** Milliseconds since the epoch: the id is kept until then (an expired checkpoint is refused anyway). */
  readonly expiresAt: number;
}

/**
 * Which checkpoints were resumed, for every runtime on the store: a paused run goes on once, whichever
 * host resumes it. `claim` records the id under a unique key, one statement in a transaction of its own,
 * and answers whether this was the first resume anywhere. Ids are forgotten once their checkpoint expired.
 */
export interface CheckpointLedger {
  /** True the first time `claim.id` is claimed on this store; false after. Rejects with a `StoreError`. */
  claim(claim: ResumeClaim, signal?: AbortSignal): Promise<boolean>;
}

/** Checks a claim before it reaches a table (the id a UUID, the expiry a time) and keeps the id in lowercase. */
export function checkClaim(claim: ResumeClaim): ResumeClaim {
  if (typeof claim.id !== "string" || !/^[0-9a-f-]{36}$/i.test(claim.id))
    throw new StoreError("invalid_input", `Expected a checkpoint id (a UUID), got ${JSON.stringify(claim.id)}.`);
  if (!Number.isFinite(claim.expiresAt))
    throw new StoreError("invalid_input", `Expected expiresAt to be a time in milliseconds, got ${claim.expiresAt}.`);
  return { ...claim, id: claim.id.toLowerCase() };
}

/** The in-memory ledger of `MemoryBundleStore`: shared by the runtimes of one process that share the store. */
export class MemoryCheckpointLedger implements CheckpointLedger {
  readonly #ids = new Map<string, number>();
  readonly #clock: () => number;

  constructor(clock: () => number) {
    this.#clock = clock;
  }

  async claim(claim: ResumeClaim, signal?: AbortSignal): Promise<boolean> {
    signal?.throwIfAborted();
    const { id, expiresAt } = checkClaim(claim);
    const now = this.#clock();
    for (const [seen, until] of this.#ids) if (until < now) this.#ids.delete(seen);
    if (this.#ids.has(id)) return false;
    this.#ids.set(id, expiresAt);
    return true;
  }
}
