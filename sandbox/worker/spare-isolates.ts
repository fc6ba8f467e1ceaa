import { isolateMaker } from "./isolate-maker.js";
import { PREPARE_TIMEOUT_MS, type PreparedIsolate, prepareIsolateOffThread } from "./prepared-isolate.js";

const MAX_KINDS = 4;
/**
 * Prepared isolates kept ready per kind (~1.1 MB each): a burst of cold calls takes one each while the next
 * is made (~2 ms of a pool thread's CPU), so the burst a stock covers grows with its depth.
 */
export const SPARES_PER_KIND = 6;
/** Preparations running at once on isolated-vm's threads: more competed with the calls for 2 cores. */
export const PREPARING_AT_ONCE = 1;

/** Prepares one spare asynchronously. */
export type PrepareSpare = (prelude: string, memoryMb: number) => Promise<PreparedIsolate>;

interface Kind {
  readonly prelude: string;
  readonly memoryMb: number;
  readonly ready: PreparedIsolate[];
  preparing: number;
}

/**
 * Keeps `SPARES_PER_KIND` prepared isolates ready per (prelude, memory limit), so a tenant's first call
 * skips creating the isolate and installing the prelude (most of a cold start). A kind is wanted once a
 * bundle with it is loaded; a spare taken is replaced between calls (`setImmediate`: after the answers of
 * the current batch went out), wholly on isolated-vm's threads (isolate-maker.ts), so a cold call never
 * waits behind a refill on this thread. `PREPARING_AT_ONCE` at a time (three at once competed with the
 * calls for a 2-core machine's CPU). At most `MAX_KINDS` kinds are kept, the least recently wanted dropped
 * first.
 */
export class SpareIsolates {
  readonly #kinds = new Map<string, Kind>();
  readonly #perKind: number;
  /** Preparations running on isolated-vm's threads, at most `#inFlight`, so refills never crowd the calls' CPU. */
  #preparing = 0;
  #scheduled = false;
  #closed = false;
  readonly #prepare: PrepareSpare;
  readonly #inFlight: number;

  /** `prepare` defaults to the maker's; probes pass others, and other depths, to compare. */
  constructor(options: { perKind?: number; inFlight?: number; prepare?: PrepareSpare } = {}) {
    const { perKind = SPARES_PER_KIND, inFlight = PREPARING_AT_ONCE, prepare } = options;
    this.#perKind = perKind;
    this.#inFlight = inFlight;
    this.#prepare =
      prepare ?? ((prelude, memoryMb) => prepareIsolateOffThread(isolateMaker, prelude, memoryMb, PREPARE_TIMEOUT_MS));
  }

  /** A spare for this kind if one is ready, else undefined; either way the kind is refilled between calls. */
  take(prelude: string, memoryMb: number): PreparedIsolate | undefined {
    const kind = this.#want(prelude, memoryMb);
    const spare = kind.ready.pop();
    this.#schedule();
    return spare;
  }

  /** Starts keeping spares of this kind (a bundle with it was loaded). */
  want(prelude: string, memoryMb: number): void {
    this.#want(prelude, memoryMb);
    this.#schedule();
  }

  get size(): number {
    let size = 0;
    for (const kind of this.#kinds.values()) size += kind.ready.length;
    return size;
  }

  /** Resolves once no isolate is being made on isolated-vm's threads (by the process's maker). */
  settled(): Promise<void> {
    return isolateMaker.settled();
  }

  dispose(): void {
    this.#closed = true;
    for (const kind of this.#kinds.values()) for (const spare of kind.ready) spare.isolate.dispose();
    this.#kinds.clear();
  }

  #want(prelude: string, memoryMb: number): Kind {
    const key = `${memoryMb}\u0000${prelude}`;
    let kind = this.#kinds.get(key);
    if (kind !== undefined) {
      this.#kinds.delete(key);
    } else {
      kind = { prelude, memoryMb, ready: [], preparing: 0 };
      if (this.#kinds.size >= MAX_KINDS) this.#dropOldest();
    }
    this.#kinds.set(key, kind);
    return kind;
  }

  #dropOldest(): void {
    for (const [key, kind] of this.#kinds) {
      this.#kinds.delete(key);
      for (const spare of kind.ready) spare.isolate.dispose();
      return;
    }
  }

  #schedule(): void {
    if (this.#scheduled || this.#closed) return;
    this.#scheduled = true;
    setImmediate(this.#refillOne).unref();
  }

  #refillOne = (): void => {
    this.#scheduled = false;
    if (this.#closed || this.#preparing >= this.#inFlight) return;
    for (const kind of this.#kinds.values()) {
      if (kind.ready.length + kind.preparing >= this.#perKind) continue;
      kind.preparing++;
      this.#preparing++;
      this.#prepare(kind.prelude, kind.memoryMb).then(
        (spare) => {
          kind.preparing--;
          this.#preparing--;
          if (this.#closed || this.#kinds.get(`${kind.memoryMb}\u0000${kind.prelude}`) !== kind) {
            spare.isolate.dispose();
          } else {
            kind.ready.push(spare);
          }
          this.#schedule();
        },
        () => {
          // A spare is an optimisation: the next cold call prepares its own isolate and reports any failure.
          kind.preparing--;
          this.#preparing--;
        },
      );
      if (this.#preparing < this.#inFlight) this.#schedule();
      return;
    }
  };
}
