import {
  admitCall,
  type DescribeOutcome,
  ExecutorClosedError,
  type HookExecutor,
  isRefused,
  loadTimeoutOf,
  notify,
  type SandboxBundle,
  type SandboxCall,
  type SandboxLimits,
  type SandboxResult,
  type TenantId,
} from "../../src/protocol/index.js";
import { SandboxStartError } from "./errors.js";
import type { SupervisorEvent, WorkerExit } from "./events.js";
import { LongCallTenants } from "./long-calls.js";
import { ObserveLane } from "./observe-lane.js";
import type { ProcessOptions } from "./options.js";
import { fail, type PendingCall } from "./pending-call.js";
import { Relief } from "./relief.js";
import { readRssBytes } from "./rss.js";
import { bystanderFailure } from "./settle-exit.js";
import { shardOf } from "./shard.js";
import type { WorkerSpawnSpec } from "./spawn-spec.js";
import { WarmUps } from "./warm-up.js";
import { WorkerProcess } from "./worker-process.js";
import { WorkerSlot } from "./worker-slot.js";

/** A worker as `workers()` reports it. `slot` is -1 for the spare. */
export interface WorkerInfo {
  readonly slot: number;
  readonly pid: number;
  readonly ready: boolean;
  readonly accepting: boolean;
  readonly pending: number;
  /** Its resident set size at the last RSS check (every `rssCheckMs`), once read. */
  readonly rssBytes: number | undefined;
}

/** Executors alive in this process, killed synchronously if the process exits without closing them. */
const LIVE = new Set<ProcessExecutor>();
function killAllOnExit(): void {
  for (const executor of LIVE) executor.killNow();
}

/**
 * The `process` executor: tenants sharded over N supervised worker processes (stable hash of the tenant
 * id), calls pipelined over each worker's framed channel, one spare worker booted ahead so a crashed worker is replaced at once,
 * RSS watched and a worker over its cap drained and replaced. See worker-process.ts for the channel.
 * Tenants whose calls run long (long-calls.ts) go to one more worker, the long-call worker (slot index
 * `workers`, started with the first such tenant), so that a spinning tenant holds no short call of the
 * tenants on its shard.
 *
 * Costs (`SandboxCost`): `runMs` is the worker's own measure of the call's run, so a tenant is
 * never charged for the calls of tenants sharing its worker; what the caller waited beyond it (calls
 * ahead on the worker, a restart, transit) is `queuedMs`.
 */
export class ProcessExecutor implements HookExecutor {
  readonly mode = "process" as const;
  #options: ProcessOptions;
  #spec: WorkerSpawnSpec;
  #sandboxLimits: SandboxLimits;
  #slots: WorkerSlot[];
  #lanes: ObserveLane[];
  #long = new LongCallTenants();
  #relief: Relief;
  #spare: WorkerProcess | undefined;
  #all = new Set<WorkerProcess>();
  #warmUps = new WarmUps();
  #closing: Promise<void> | undefined;
  #rssTimer: NodeJS.Timeout;
  #checkingRss = false;
  /** The last RSS read of each worker, by pid (reported by `workers()`, for metrics). */
  #rss = new Map<number, number>();

  /** `holdSliceMs`: how long a call may hold other tenants' calls behind it before they move (0: never). */
  constructor(options: ProcessOptions, spec: WorkerSpawnSpec, holdSliceMs: number) {
    this.#options = options;
    this.#spec = spec;
    const { memoryMb, maxResultChars, maxStateChars, maxLogLines, maxLogChars } = options.limits;
    const loadTimeoutMs = loadTimeoutOf(options.limits);
    this.#sandboxLimits = { memoryMb, maxResultChars, maxStateChars, maxLogLines, maxLogChars, loadTimeoutMs };
    this.#slots = Array.from({ length: options.workers }, (_, i) => new WorkerSlot(i, this.#spawn));
    this.#lanes = this.#slots.map(() => new ObserveLane());
    this.#relief = new Relief(
      {
        watched: () => this.#all,
        targets: () => this.#reliefTargets(),
        stays: (tenantId) => this.#long.isLong(tenantId, performance.now()),
      },
      holdSliceMs,
    );
    this.#refillSpare();
    this.#rssTimer = setInterval(this.#checkRss, options.rssCheckMs);
    this.#rssTimer.unref();
    if (LIVE.size === 0) process.on("exit", killAllOnExit);
    LIVE.add(this);
  }

  /**
   * Waits until every shard's worker is ready and warmed up; on failure closes everything and throws
   * `SandboxStartError`.
   */
  async started(signal?: AbortSignal): Promise<void> {
    const problem = await this.#warmUps.ready(this.#slots, signal);
    if (problem === undefined) return;
    await this.close();
    throw problem === "aborted" ? signal?.reason : new SandboxStartError(problem.why, problem.detail);
  }

  execute(bundle: SandboxBundle, call: SandboxCall, signal?: AbortSignal): Promise<SandboxResult> {
    if (this.#closing !== undefined) return Promise.reject(new ExecutorClosedError());
    if (signal?.aborted) return Promise.reject(signal.reason);
    const admitted = admitCall(call, this.#options.limits);
    if (isRefused(admitted)) return Promise.resolve(admitted);
    const slot = this.#long.isLong(call.tenantId, performance.now()) ? this.#longSlot() : this.#slotOf(call.tenantId);
    const lane = this.#lanes[slot.index] as ObserveLane;
    if (admitted.priority === "observe") {
      return lane.observe((askedAt) => this.#send(slot, bundle, admitted, signal, askedAt), signal);
    }
    lane.decisionStarted();
    const relief = this.#relief;
    const shard = slot.current;
    relief.watch(shard);
    const elsewhere = relief.active ? relief.route(admitted.tenantId, shard) : undefined;
    const sent =
      elsewhere === undefined
        ? this.#send(slot, bundle, admitted, signal, undefined)
        : relief.send(elsewhere, bundle, admitted, signal);
    // One reaction for the lane's count, relief and the long-call routing: a decision call's only host-side hop.
    return sent.then(
      (result) => {
        lane.decisionSettled();
        if (relief.diverting) relief.settled(admitted);
        this.#long.settled(call.tenantId, result, performance.now());
        return result;
      },
      (error: unknown) => {
        lane.decisionSettled();
        if (relief.diverting) relief.settled(admitted);
        throw error;
      },
    );
  }

  #send(
    slot: WorkerSlot,
    bundle: SandboxBundle,
    call: SandboxCall,
    signal: AbortSignal | undefined,
    askedAt: number | undefined,
  ): Promise<SandboxResult> {
    const worker = slot.current;
    if (worker !== undefined) return worker.execute(bundle, call, signal, askedAt);
    // Waiting for the shard's worker to be (re)started is queueing too: it counts in `queuedMs`.
    const waitedFrom = askedAt ?? performance.now();
    return slot.whenWorker().then((next) => {
      if (signal?.aborted) throw signal.reason;
      return next === undefined ? closedOutcome() : next.execute(bundle, call, signal, waitedFrom);
    });
  }

  describe(tenantId: TenantId, bundle: SandboxBundle, signal?: AbortSignal): Promise<DescribeOutcome> {
    if (this.#closing !== undefined) return Promise.reject(new ExecutorClosedError());
    if (signal?.aborted) return Promise.reject(signal.reason);
    const slot = this.#slotOf(tenantId);
    const worker = slot.current;
    if (worker !== undefined) return worker.describe(tenantId, bundle, signal);
    const askedAt = performance.now();
    return slot.whenWorker().then((next) => {
      if (signal?.aborted) throw signal.reason;
      return next === undefined ? closedOutcome() : next.describe(tenantId, bundle, signal, askedAt);
    });
  }

  /** Stops every worker (killed if stuck); pending calls settle as `unavailable`. Resolves once all have exited. */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  /** The worker processes now, for health checks and tests. */
  workers(): WorkerInfo[] {
    return [...this.#all].map((w) => ({
      slot: w.slot,
      pid: w.pid,
      ready: w.ready,
      accepting: w.accepting,
      pending: w.pending.size,
      rssBytes: this.#rss.get(w.pid),
    }));
  }

  /** The shard a tenant's calls go to. */
  shardOf(tenantId: string): number {
    return shardOf(tenantId, this.#options.workers);
  }

  /** Synchronous SIGKILL of every worker, for process exit handlers. */
  killNow(): void {
    for (const worker of this.#all) worker.killNow();
  }

  async #shutdown(): Promise<void> {
    clearInterval(this.#rssTimer);
    this.#relief.close();
    for (const slot of this.#slots) slot.close();
    for (const lane of this.#lanes) lane.close(new ExecutorClosedError());
    this.#spare = undefined;
    await Promise.all([...this.#all].map((w) => w.close()));
    LIVE.delete(this);
    if (LIVE.size === 0) process.off("exit", killAllOnExit);
  }

  #slotOf(tenantId: string): WorkerSlot {
    const slot = this.#slots[shardOf(tenantId, this.#options.workers)];
    if (slot === undefined) throw new RangeError("shardOf returned a slot out of range");
    return slot;
  }

  /** The long-call worker's slot, after the shards' (made with the first long-running tenant). */
  #longSlot(): WorkerSlot {
    const index = this.#options.workers;
    const existing = this.#slots[index];
    if (existing !== undefined) return existing;
    const slot = new WorkerSlot(index, this.#spawn);
    this.#slots.push(slot);
    this.#lanes.push(new ObserveLane());
    return slot;
  }

  /** Workers that may take over calls held behind a long one: the shards' and the spare. */
  *#reliefTargets(): Iterable<WorkerProcess> {
    for (let i = 0; i < this.#options.workers; i++) {
      const worker = this.#slots[i]?.current;
      if (worker !== undefined) yield worker;
    }
    if (this.#spare !== undefined) yield this.#spare;
  }

  #spawn = (slot: number): WorkerProcess => {
    const spare = this.#spare;
    if (spare?.accepting === true) {
      this.#spare = undefined;
      spare.slot = slot;
      this.#emit({ type: "worker_started", slot, pid: spare.pid });
      this.#refillSpare();
      return spare;
    }
    return this.#fork(slot);
  };

  #refillSpare(): void {
    if (this.#options.spareWorker && this.#closing === undefined && this.#spare === undefined) {
      this.#spare = this.#fork(-1);
    }
  }

  #fork(slot: number): WorkerProcess {
    const worker = new WorkerProcess(slot, {
      spec: this.#spec,
      limits: this.#sandboxLimits,
      loadTimeoutMs: loadTimeoutOf(this.#options.limits),
      killGraceMs: this.#options.killGraceMs,
      maxPending: this.#options.maxPendingPerWorker,
      onExit: this.#onExit,
    });
    this.#all.add(worker);
    this.#warmUps.start(worker, this.#options.limits.timeoutMs);
    this.#emit({ type: "worker_started", slot, pid: worker.pid });
    return worker;
  }

  #onExit = (worker: WorkerProcess, exit: WorkerExit): void => {
    this.#all.delete(worker);
    this.#emit({
      type: "worker_exited",
      slot: worker.slot,
      pid: worker.pid,
      reason: exit.reason,
      exitCode: exit.exitCode,
      signal: exit.signal,
      failedCalls: exit.failedCalls,
    });
    if (worker === this.#spare) {
      // A spare that dies is replaced on demand, not in a loop; calls it took over go to their shards.
      this.#spare = undefined;
      for (const entry of exit.retry)
        if (entry.kind === "call") this.#resend(this.#slotOf(entry.call.tenantId), [entry]);
      return;
    }
    const slot = this.#slots[worker.slot];
    slot?.workerExited(worker, exit);
    if (exit.retry.length > 0) this.#resend(slot, exit.retry);
  };

  /** Bystanders of a worker's death go once to its replacement (after a respawn backoff, if any). */
  #resend(slot: WorkerSlot | undefined, entries: readonly PendingCall[]): void {
    const next = this.#closing === undefined ? slot?.current : undefined;
    if (next !== undefined || slot === undefined || this.#closing !== undefined) {
      for (const entry of entries) {
        if (next !== undefined) next.resend(entry);
        else fail(entry, bystanderFailure("closed", -1, ""), performance.now());
      }
      return;
    }
    void slot.whenWorker().then((worker) => this.#resend(worker === undefined ? undefined : slot, entries));
  }

  #checkRss = async (): Promise<void> => {
    if (this.#checkingRss || this.#closing !== undefined) return;
    this.#checkingRss = true;
    try {
      for (const pid of this.#rss.keys())
        if (!this.#slots.some((slot) => slot.current?.pid === pid)) this.#rss.delete(pid);
      for (const slot of this.#slots) {
        const worker = slot.current;
        if (worker === undefined || !worker.ready) continue;
        const rss = await readRssBytes(worker.pid);
        if (rss !== undefined) this.#rss.set(worker.pid, rss);
        if (rss === undefined || rss <= this.#options.rssCapBytes || slot.current !== worker) continue;
        this.#emit({ type: "worker_recycling", slot: slot.index, pid: worker.pid, rssBytes: rss });
        slot.recycle();
      }
    } finally {
      this.#checkingRss = false;
    }
  };

  #emit(event: SupervisorEvent): void {
    notify(this.#options.onEvent, event);
  }
}

function closedOutcome(): SandboxResult & { type: "failed" } {
  const message = "The hook executor was closed while this call was waiting for a worker";
  return { type: "failed", failure: { code: "unavailable", message }, cpuMs: 0, runMs: 0 };
}
