import { countsTowardsQuarantine, type FailureCode, type HookOutcome } from "../protocol/index.js";
import type { BundleKey } from "./quarantine.js";

/**
 * How a gated call ended: `healthy` (it ran and failed in no quarantine kind), `struck` (it took a
 * quarantine strike), `none` (it did not run, or its failure proves nothing either way: a bystander's, or
 * a timeout a busy machine starved short of the tenant's own CPU time).
 */
export type CallEnd = "healthy" | "struck" | "none";

/** How a call that ran ended, for its turn: a failure of a quarantine kind that took no strike proves nothing. */
export function endOf(outcome: HookOutcome, strike: FailureCode | undefined): CallEnd {
  if (strike !== undefined) return "struck";
  if (outcome.type !== "failed") return "healthy";
  const { failure } = outcome;
  return failure.bystander === true || countsTowardsQuarantine(failure) ? "none" : "healthy";
}

/** Ends a gated call's turn; the next waiting call of the bundle may start. */
export type Turn = (end: CallEnd) => void;

/** Trusted keys kept at most: past it the set starts over (a bundle then proves itself once more). */
const MAX_TRUSTED = 100_000;
/** How long a struck call's turn waits for the book to count the strike, at most (a slow store). */
const COUNT_WAIT_MS = 1_000;

interface Waiter {
  readonly start: (turn: Turn) => void;
  readonly reject: (reason: unknown) => void;
  readonly signal: AbortSignal | undefined;
}

interface Queue {
  busy: boolean;
  readonly waiting: Waiter[];
}

/**
 * Which bundles a host runs one call at a time. A bundle is suspect on a host until one of its calls
 * ends healthy: from its first call there (a bundle that spins from its first call gets one call per host
 * in, not one per lane), and again from any strike. A suspect bundle's call starts once the previous one
 * ended and, when that one struck, once the book has counted the strike (in a fleet: the store answered
 * the report or refused it), so each host has at most one call of a suspect bundle in flight beyond what
 * the book has seen: a hostile bundle gets at most the threshold plus one call per host. A trusted
 * bundle's call passes with one set lookup and writes nothing.
 */
export class SuspectGate {
  readonly #trusted = new Set<string>();
  readonly #queues = new Map<string, Queue>();
  readonly #counted: () => Promise<void>;

  /** `counted` resolves once every strike counted so far reached the book that decides (the store's). */
  constructor(counted: () => Promise<void>) {
    this.#counted = counted;
  }

  /** Undefined when the call may start at once (a trusted bundle); else resolves to its turn when it may. */
  admit(key: BundleKey, signal: AbortSignal | undefined): Promise<Turn> | undefined {
    if (this.#trusted.has(key.id)) return undefined;
    let queue = this.#queues.get(key.id);
    if (queue === undefined) {
      queue = { busy: false, waiting: [] };
      this.#queues.set(key.id, queue);
    }
    if (!queue.busy) {
      queue.busy = true;
      return Promise.resolve(this.#turnOf(key.id, queue));
    }
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    // No abort listener per waiter (a run's signal is shared by its calls): an aborted waiter is
    // rejected when its turn comes, at most one call's time later.
    const waiting = queue.waiting;
    return new Promise<Turn>((start, reject) => waiting.push({ start, reject, signal }));
  }

  /** A strike makes the bundle suspect again on this host. */
  distrust(key: BundleKey): void {
    this.#trusted.delete(key.id);
  }

  #turnOf(id: string, queue: Queue): Turn {
    let ended = false;
    return (end) => {
      if (ended) return;
      ended = true;
      if (end === "healthy") {
        if (this.#trusted.size >= MAX_TRUSTED) this.#trusted.clear();
        this.#trusted.add(id);
        // Trusted now: the calls that queued meanwhile all start at once.
        while (queue.waiting.length > 0) this.#next(id, queue, () => undefined);
      }
      if (end !== "struck") this.#next(id, queue);
      else void countedOrLate(this.#counted()).then(() => this.#next(id, queue));
    };
  }

  #next(id: string, queue: Queue, turn?: Turn): void {
    let waiter = queue.waiting.shift();
    while (waiter?.signal?.aborted === true) {
      waiter.reject(waiter.signal.reason);
      waiter = queue.waiting.shift();
    }
    if (waiter === undefined) {
      queue.busy = false;
      if (this.#queues.get(id) === queue) this.#queues.delete(id);
      return;
    }
    waiter.start(turn ?? this.#turnOf(id, queue));
  }
}

/** The book's count, or after COUNT_WAIT_MS: a store that slow does not hold a bundle's calls longer. */
async function countedOrLate(counted: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, COUNT_WAIT_MS);
  });
  await Promise.race([counted.catch(() => undefined), late]);
  clearTimeout(timer);
}
