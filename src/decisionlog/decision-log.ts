import type { DecisionEntry, DecisionSink } from "../dispatch/index.js";
import type { RunId, TenantId } from "../protocol/index.js";
import { type DecisionLogStore, type DecisionRow, type LogSettings, StoreError } from "../store/index.js";
import { DecisionLogMetrics } from "../telemetry/index.js";
import { toDecisionRow } from "./decision-row.js";
import { type LogOptions, parseLogOptions, type ResolvedLogOptions } from "./log-options.js";
import { compileMask, type MaskPlan } from "./masking.js";
import { sampledRun } from "./sampling.js";

/** What the log did since it opened. `dropped` never slowed or failed a hook call: it is what that cost. */
export interface DecisionLogStats {
  /** Entries taken into the buffer. */
  readonly recorded: number;
  /** Rows the store accepted. */
  readonly written: number;
  /** Entries dropped because the buffer was full (entries or characters). */
  readonly droppedFull: number;
  /**
   * Entries lost because the store refused their batch for good (full, corrupt, closed), or was still
   * unreachable when the log was flushed or closed.
   */
  readonly droppedFailed: number;
  /** Times a batch went back to the buffer because the store was unreachable or busy (its entries count once each time). */
  readonly requeued: number;
  /** Records deleted by retention. */
  readonly pruned: number;
  /** Entries waiting in the buffer or in the write in flight. */
  readonly pending: number;
}

interface TenantPlan {
  readonly settings: LogSettings;
  readonly mask: MaskPlan;
}

const DAY_MS = 86_400_000;

/**
 * The decision log: the dispatcher's `DecisionSink` and its writer. `record` is the hot path: one bounded
 * push (a full buffer drops and counts, never waits); a timer drains the buffer in batches, one write in
 * flight at a time, masking and capping each entry before it reaches the store, and applies each tenant's
 * retention after it writes. Settings come from the store (re-read every `refreshMs`), else `all`.
 * A batch the store cannot take for a moment (`unavailable`, `busy`: a database outage) goes back to the
 * front of the buffer and is written again every `retryMs` until it lands; meanwhile the buffer's bound
 * holds and what does not fit is dropped and counted. `flush` and `close` write once more and drop (and
 * count) what the store still refuses.
 *
 * ```ts
 * const log = await DecisionLog.open({ store, all: { sample: 0.1 } });
 * const dispatcher = createDispatcher({ executor, decisionLog: log });
 * // …
 * await log.close(); // flushes what is buffered
 * ```
 */
export class DecisionLog implements DecisionSink {
  readonly #store: DecisionLogStore;
  readonly #options: ResolvedLogOptions;
  readonly #all: TenantPlan | undefined;
  #tenants = new Map<TenantId, TenantPlan>();
  #buffer: DecisionEntry[] = [];
  #bufferedChars = 0;
  #inFlight = 0;
  #writing: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #refresher: ReturnType<typeof setInterval> | undefined;
  readonly #lastPrune = new Map<TenantId, number>();
  #closed = false;
  #stats = { recorded: 0, written: 0, droppedFull: 0, droppedFailed: 0, requeued: 0, pruned: 0 };
  /** Set while the store is unreachable: the buffer waits `retryMs` before the next write. */
  #backingOff = false;
  /** Full-buffer drops not yet told to `onDropped`: told at most once per `flushMs`, not once per entry. */
  #untoldFull = 0;
  #toldAt = Number.NEGATIVE_INFINITY;
  readonly #metrics = new DecisionLogMetrics();

  private constructor(store: DecisionLogStore, options: ResolvedLogOptions) {
    this.#store = store;
    this.#options = options;
    this.#all = options.all === undefined ? undefined : plan(options.all);
  }

  /**
   * Reads the tenants' settings, then re-reads them every `refreshMs`. Options are validated (TypeError).
   * A store that cannot be read now (a database outage) does not stop the log: it starts with `all` only
   * and picks the settings up at the next successful read.
   */
  static async open(store: DecisionLogStore, options: LogOptions = {}): Promise<DecisionLog> {
    const log = new DecisionLog(store, parseLogOptions(options));
    await log.refresh().catch(() => {});
    log.#refresher = setInterval(() => void log.refresh().catch(() => {}), log.#options.refreshMs);
    log.#refresher.unref?.();
    return log;
  }

  sampled(tenantId: TenantId, runId: RunId): boolean {
    if (this.#closed) return false;
    const found = this.#tenants.get(tenantId) ?? this.#all;
    return found !== undefined && sampledRun(runId, found.settings.sample);
  }

  logs(tenantId: TenantId): boolean {
    return !this.#closed && (this.#tenants.get(tenantId) ?? this.#all) !== undefined;
  }

  record(entry: DecisionEntry): void {
    const size = chars(entry);
    const { bufferSize, bufferChars } = this.#options;
    if (this.#closed || this.#buffer.length >= bufferSize || this.#bufferedChars + size > bufferChars) {
      this.#stats.droppedFull++;
      this.#untoldFull++;
      if (this.#options.clock() - this.#toldAt >= this.#options.flushMs) this.#tellFull();
      return;
    }
    this.#buffer.push(entry);
    this.#bufferedChars += size;
    this.#stats.recorded++;
    if (this.#timer === undefined && this.#writing === undefined) this.#arm();
    else if (this.#buffer.length === this.#options.batchSize && this.#writing === undefined && !this.#backingOff) {
      // A full batch need not wait for the timer.
      clearTimeout(this.#timer);
      this.#timer = undefined;
      setImmediate(() => void this.#drain(false));
    }
  }

  stats(): DecisionLogStats {
    return { ...this.#stats, pending: this.#buffer.length + this.#inFlight };
  }

  /** Re-reads every tenant's settings from the store (the timer does this every `refreshMs`). */
  async refresh(): Promise<void> {
    const rows = await this.#store.logSettings();
    this.#tenants = new Map(rows.map((row) => [row.tenantId, plan(row)]));
  }

  /** Writes everything buffered now; resolves when the store has it (or refused it: dropped and counted). */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#buffer.length > 0 || this.#writing !== undefined) {
      if (this.#writing !== undefined) await this.#writing;
      else await this.#drain(true);
    }
  }

  /** Stops taking entries, flushes the buffer and stops the timers. The store is the caller's. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#refresher);
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  #arm(ms = this.#options.flushMs): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#drain(false);
    }, ms);
    this.#timer.unref?.();
  }

  /** Writes one batch; `final` (flush, close): a batch the store refuses is dropped, never put back. */
  #drain(final: boolean): Promise<void> {
    this.#tellFull();
    if (this.#writing !== undefined) return this.#writing;
    const batch = this.#buffer.splice(0, this.#options.batchSize);
    if (batch.length === 0) return Promise.resolve();
    for (const e of batch) this.#bufferedChars -= chars(e);
    this.#inFlight = batch.length;
    this.#writing = this.#write(batch, final).finally(() => {
      this.#writing = undefined;
      this.#inFlight = 0;
      if (this.#closed || this.#buffer.length === 0) return;
      if (this.#backingOff) this.#arm(this.#options.retryMs);
      // A full batch waiting goes at once (the writer keeps up with a busy host); a part batch waits flushMs.
      else if (this.#buffer.length >= this.#options.batchSize) setImmediate(() => void this.#drain(false));
      else this.#arm();
    });
    return this.#writing;
  }

  async #write(batch: readonly DecisionEntry[], final: boolean): Promise<void> {
    const rows: DecisionRow[] = [];
    for (const entry of batch) {
      const found = this.#tenants.get(entry.tenantId) ?? this.#all;
      // A tenant switched off since its run was sampled is not written.
      if (found === undefined) continue;
      const row = toDecisionRow(entry, found.mask, this.#options.maxEventChars);
      if (row !== undefined) rows.push(row);
    }
    try {
      this.#stats.written += await this.#store.appendDecisions(rows);
    } catch (error) {
      if (!final && !this.#closed && passing(error)) {
        this.#backingOff = true;
        this.#stats.requeued += batch.length;
        this.#buffer.unshift(...batch);
        for (const e of batch) this.#bufferedChars += chars(e);
        return;
      }
      this.#stats.droppedFailed += batch.length;
      this.#dropped("failed", batch.length);
      return;
    }
    this.#backingOff = false;
    await this.#prune(rows);
  }

  #tellFull(): void {
    if (this.#untoldFull === 0) return;
    this.#toldAt = this.#options.clock();
    this.#dropped("full", this.#untoldFull);
    this.#untoldFull = 0;
  }

  #dropped(reason: "full" | "failed", count: number): void {
    this.#metrics.dropped(reason, count);
    try {
      this.#options.onDropped?.({ type: "decisionlog.dropped", reason, count });
    } catch {
      // A listener's throw must not stop the writer.
    }
  }

  async #prune(rows: readonly DecisionRow[]): Promise<void> {
    const now = this.#options.clock();
    for (const tenantId of new Set(rows.map((r) => r.tenantId))) {
      const last = this.#lastPrune.get(tenantId);
      if (last !== undefined && now - last < this.#options.pruneMs) continue;
      this.#lastPrune.set(tenantId, now);
      const settings = (this.#tenants.get(tenantId) ?? this.#all)?.settings;
      if (settings === undefined) continue;
      try {
        this.#stats.pruned += await this.#store.pruneDecisions({
          tenantId,
          before: now - settings.retainDays * DAY_MS,
          keep: settings.retain,
        });
      } catch {
        // Retried at the next write past `pruneMs`.
      }
    }
  }
}

const chars = (e: DecisionEntry) => e.eventJson.length + e.stateJson.length;

/** A store failure that passes (an outage, a lock held too long): the batch is worth writing again. */
function passing(error: unknown): boolean {
  return error instanceof StoreError && (error.code === "unavailable" || error.code === "busy");
}

function plan(settings: LogSettings): TenantPlan {
  return { settings, mask: compileMask(settings.mask) };
}
