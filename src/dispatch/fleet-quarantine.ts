import type { FailureCode } from "../protocol/index.js";
import type { Emit } from "./events.js";
import {
  type BundleKey,
  bundleKey,
  LocalQuarantineBook,
  type QuarantineBook,
  type QuarantineStatus,
} from "./quarantine.js";
import type { FleetQuarantine, QuarantineLedger, QuarantineSettings, ReportedFailure } from "./quarantine-ledger.js";
import type { Turn } from "./suspect-gate.js";

/** Failures waiting for the store, at most: past it the oldest are dropped and counted (`droppedFailures`). */
const MAX_PENDING = 10_000;
/** How soon a report the store refused is tried again. */
const RETRY_MS = 1_000;

export interface FleetBookOptions {
  readonly settings: QuarantineSettings;
  readonly emit: Emit | undefined;
  readonly ledger: QuarantineLedger;
  /** This host's name in the store's book (`FailureReport.host`). */
  readonly host: string;
  readonly clock: () => number;
}

/**
 * The quarantine book of one host in a fleet: this host's `LocalQuarantineBook`, which answers every call
 * without waiting, joined to the store's book. A failure is counted here at once and reported to the store
 * in the background (batched; a healthy call writes nothing); the store counts every host's failures of a
 * bundle, and an entry it makes reaches every host through `watch` (and the report's answer), where the
 * local book adopts it. While the store cannot be reached, failures wait here (bounded) and are reported
 * when it answers again; the local book goes on deciding alone meanwhile. Shadow candidates' failures
 * stay local: a candidate is one host's experiment.
 */
export class FleetQuarantineBook implements QuarantineBook {
  readonly #local: LocalQuarantineBook;
  readonly #o: FleetBookOptions;
  readonly #pending = new Map<string, { key: BundleKey; failures: ReportedFailure[] }>();
  readonly #unwatch: () => void;
  #size = 0;
  #dropped = 0;
  #flushing: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;
  /** Waiting for `reported`. */
  readonly #reporting: (() => void)[] = [];

  constructor(options: FleetBookOptions) {
    this.#o = options;
    // A suspect bundle's next call on this host waits until the store counted the last one's strike.
    this.#local = new LocalQuarantineBook(options.settings, options.emit, () => this.reported());
    this.#unwatch = options.ledger.watch((entry) => this.#adopt(entry));
  }

  /** Failures dropped because the store was unreachable for longer than the buffer holds. */
  get droppedFailures(): number {
    return this.#dropped;
  }

  status(key: BundleKey, now: number): QuarantineStatus | undefined {
    return this.#local.status(key, now);
  }

  admit(key: BundleKey, signal: AbortSignal | undefined): Promise<Turn> | undefined {
    return this.#local.admit(key, signal);
  }

  strike(key: BundleKey, code: FailureCode, now: number, weight = 1): QuarantineStatus | undefined {
    const started = this.#local.strike(key, code, now, weight);
    if (key.id === bundleKey(key.tenantId, key.hash).id) this.#queue(key, { at: now, code, weight });
    return started;
  }

  /**
   * Resolves once every failure counted so far is in the store's book; not while the store refuses them
   * (the suspect gate waits for this at most a second).
   */
  reported(): Promise<void> {
    if (this.#size === 0 && this.#flushing === undefined && this.#retry === undefined) return Promise.resolve();
    return new Promise((resolve) => this.#reporting.push(resolve));
  }

  /** Resolves once the failures counted so far were reported (or the store refused them, for a retry). */
  async settled(): Promise<void> {
    while (this.#flushing !== undefined) await this.#flushing;
  }

  /** Stops following the store; failures not yet reported are tried once more. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#unwatch();
    await this.settled();
    if (this.#size > 0) await this.#flush();
  }

  #queue(key: BundleKey, failure: ReportedFailure): void {
    let batch = this.#pending.get(key.id);
    if (batch === undefined) {
      batch = { key, failures: [] };
      this.#pending.set(key.id, batch);
    }
    batch.failures.push(failure);
    this.#size += 1;
    if (this.#size > MAX_PENDING) {
      batch.failures.shift();
      this.#size -= 1;
      this.#dropped += 1;
    }
    if (this.#retry === undefined) this.#flushing ??= this.#flush();
  }

  async #flush(): Promise<void> {
    // Let the failures of one burst (a batch of parallel calls) go in one report.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const batches = [...this.#pending.values()];
    this.#pending.clear();
    this.#size = 0;
    let failed = false;
    for (const { key, failures } of batches) {
      if (failed) {
        this.#putBack(key, failures);
        continue;
      }
      const { ledger, settings, host } = this.#o;
      try {
        const entry = await ledger.report({ tenantId: key.tenantId, bundleHash: key.hash, host, failures }, settings);
        if (entry !== undefined) this.#adopt(entry);
      } catch {
        failed = true;
        this.#putBack(key, failures);
      }
    }
    this.#flushing = undefined;
    if (failed && !this.#closed) {
      this.#retry = setTimeout(() => {
        this.#retry = undefined;
        this.#flushing ??= this.#flush();
      }, RETRY_MS);
      this.#retry.unref();
    } else if (this.#size > 0 && !this.#closed) this.#flushing = this.#flush();
    if ((!failed && this.#size === 0) || this.#closed) for (const resolve of this.#reporting.splice(0)) resolve();
  }

  #putBack(key: BundleKey, failures: readonly ReportedFailure[]): void {
    for (const failure of failures) this.#queue(key, failure);
  }

  #adopt(entry: FleetQuarantine): void {
    this.#local.adopt(bundleKey(entry.tenantId, entry.bundleHash), entry, this.#o.clock());
  }
}
