import type { SandboxBundle, SandboxCall, SandboxResult, TenantId } from "../../src/protocol/index.js";
import { type Hold, holdOf, QUIET_HOLD_MS, STARVED_SHARE } from "./held-calls.js";
import type { PendingCall } from "./pending-call.js";
import type { ThreadSchedule } from "./worker-gauge.js";
import type { WorkerProcess } from "./worker-process.js";

/** A relief worker with up to this many calls pending takes over held calls whatever their number. */
const RELIEF_QUEUE_MIN = 4;

/** What relief needs of the executor: its workers and which tenants stay where they are. */
export interface ReliefSource {
  /** Every worker with calls that may be held: the shards', the long-call worker, the spare. */
  watched(): Iterable<WorkerProcess>;
  /** Workers that may take over held calls: the shards' and the spare (never the long-call worker). */
  targets(): Iterable<WorkerProcess>;
  /** Tenants whose calls are never moved: those the long-call worker serves (they wait behind each other). */
  stays(tenantId: TenantId): boolean;
}

/**
 * A worker seen held, by whom, since when, and the call that holds it (by its id there): it is held until
 * it answers that call. Not until it answers anything: answers to calls it ran before the hold may reach
 * a busy host after the hold was seen, and a worker still spinning would look free again.
 */
interface Held {
  readonly tenantId: TenantId | undefined;
  readonly since: number;
  readonly id: number | undefined;
  readonly entry: PendingCall;
}

/** A worker first seen without an answer for half a slice: when, its last answer then, its thread's schedule. */
interface Quiet {
  readonly at: number;
  readonly progressAt: number;
  readonly schedule: ThreadSchedule | undefined;
}

/** A tenant's calls sent to a relief worker and not settled: its next decision calls follow them there. */
interface Diversion {
  worker: WorkerProcess;
  readonly calls: Set<SandboxCall>;
  /** When the last of its calls went there while its shard's worker was held. */
  heldAt: number;
}

/**
 * Relief for the calls held behind a long one. A worker runs one call at a time, so the calls queued behind
 * a call that spins, waits or loads a heavy bundle wait for it, and nothing is known about a tenant's
 * first long call before it runs. Every half `sliceMs` while calls are out, the watch looks for a worker
 * held a slice by a running call that computes, or longer by one that does not (held-calls.ts, `#holdOf`).
 * The decision calls of other tenants waiting behind its running call are re-sent to the least busy worker
 * that is not held (a shard's or the spare), and the held worker is told to skip them (`takeBack`: a
 * `cancel` frame it reads before its next call). New decision calls of other tenants go there directly
 * until the held worker answers again.
 *
 * A call may so run twice (the held worker ran it before the cancel arrived); that is harmless because a
 * hook call is a pure function of what the host sends, and the host takes exactly one answer: the copy's.
 * The held worker's answer, its cost and its failure count for nothing. A tenant's calls keep their order:
 * all of its waiting calls move together, in order, and its next calls follow them until all have settled
 * or, under continuous traffic, until a slice after its shard's worker answered again.
 */
export class Relief {
  readonly #source: ReliefSource;
  readonly #sliceMs: number;
  #timer: NodeJS.Timeout | undefined;
  readonly #held = new Map<WorkerProcess, Held>();
  readonly #quiet = new Map<WorkerProcess, Quiet>();
  readonly #diverted = new Map<TenantId, Diversion>();

  /** `sliceMs` 0: no relief (calls wait behind whatever runs). */
  constructor(source: ReliefSource, sliceMs: number) {
    this.#source = source;
    this.#sliceMs = sliceMs;
  }

  /** Some worker is held or some tenant diverted: `route` may send a call elsewhere. */
  get active(): boolean {
    return this.#held.size > 0 || this.#diverted.size > 0;
  }

  /** Some tenant's calls are out on a relief worker: `settled` wants to hear of each decision call. */
  get diverting(): boolean {
    return this.#diverted.size > 0;
  }

  /**
   * A decision call is going to `worker`: if a call is pending there already (this one may queue behind
   * it), watch the workers until none has a call queued behind another. Sequential traffic never arms it.
   */
  watch(worker: WorkerProcess | undefined): void {
    if (worker === undefined || worker.pending.size === 0) return;
    if (this.#timer !== undefined || this.#sliceMs <= 0) return;
    this.#timer = setInterval(this.#tick, this.#sliceMs / 2);
    this.#timer.unref();
  }

  /**
   * The worker a decision call of `tenantId` goes to instead of `shard` (its shard's worker), or undefined
   * for the shard's: the relief worker its earlier calls went to, or one that is not held if `shard` is
   * held by another tenant's call.
   */
  route(tenantId: TenantId, shard: WorkerProcess | undefined): WorkerProcess | undefined {
    const heldShard = shard !== undefined && this.#isHeld(shard);
    const diversion = this.#diverted.get(tenantId);
    if (diversion !== undefined) {
      const now = performance.now();
      if (heldShard) diversion.heldAt = now;
      // Home again a slice after its shard's worker answered: its calls sent here have started by then
      // unless this worker is itself slow (it answered within the slice when they were sent).
      if (diversion.worker.accepting && now - diversion.heldAt < this.#sliceMs) return diversion.worker;
      this.#diverted.delete(tenantId);
    }
    if (shard === undefined || !heldShard) return undefined;
    return this.#held.get(shard)?.tenantId === tenantId ? undefined : this.#reliefFor(shard);
  }

  /** Sends `call` to `worker` (as `route` chose) and keeps its tenant's next calls behind it there. */
  send(worker: WorkerProcess, bundle: SandboxBundle, call: SandboxCall, signal?: AbortSignal): Promise<SandboxResult> {
    this.#divert(call, worker, false);
    this.watch(worker);
    return worker.execute(bundle, call, signal);
  }

  /** A decision call settled (answered, failed or aborted): its tenant's calls may go home once all have. */
  settled(call: SandboxCall): void {
    const diversion = this.#diverted.get(call.tenantId);
    if (diversion === undefined || !diversion.calls.delete(call)) return;
    if (diversion.calls.size === 0) this.#diverted.delete(call.tenantId);
  }

  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#held.clear();
    this.#quiet.clear();
    this.#diverted.clear();
  }

  #tick = (): void => {
    const now = performance.now();
    let busy = false;
    for (const worker of this.#source.watched()) {
      if (worker.pending.size < 2) {
        if (this.#quiet.size > 0) this.#quiet.delete(worker);
        continue;
      }
      busy = true;
      const hold = this.#holdOf(worker, now);
      if (hold === undefined) continue;
      this.#held.set(worker, {
        tenantId: hold.tenantId,
        since: hold.since,
        id: idOf(worker, hold.entry),
        entry: hold.entry,
      });
      if (hold.behind.length > 0) this.#relieve(worker, hold);
    }
    for (const worker of this.#held.keys()) this.#isHeld(worker);
    if (busy) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  };

  /**
   * `worker`'s hold, if its running call holds it. The worker thread's schedule is read when the worker
   * has not answered for half a slice and again at the slice: its calls move if the call its mark names
   * ran that long and the thread meanwhile ran half a slice, or ran without waiting for a core most of the
   * time. A thread that did nothing may be waiting on its own (`Atomics.wait`) or be done, its answer not
   * yet read by a busy host; one that mostly waited for a core is starved by the machine, and moving its
   * calls to a worker as starved helps nothing: their calls move once the call has been named for
   * `QUIET_HOLD_MS`.
   */
  #holdOf(worker: WorkerProcess, now: number): Hold | undefined {
    const progressAt = worker.progressAt;
    // The running mark (one small read) before the thread's schedule (a /proc file): under pipelined load
    // a worker answers in batches, so it is often quiet for half a slice while its calls each run µs.
    const running = worker.pending.size < 2 || now - progressAt < this.#sliceMs / 2 ? undefined : worker.running();
    if (running === undefined || now - running.startedAt < this.#sliceMs / 2) {
      this.#quiet.delete(worker);
      return undefined;
    }
    const quiet = this.#quiet.get(worker);
    if (quiet?.progressAt !== progressAt) {
      this.#quiet.set(worker, { at: now, progressAt, schedule: worker.schedule() });
      return undefined;
    }
    const hold = holdOf(worker, running, now, this.#sliceMs, this.#source.stays);
    if (hold === undefined || now - hold.since >= QUIET_HOLD_MS) return hold;
    const first = quiet.schedule;
    const last = first === undefined ? undefined : worker.schedule();
    if (first === undefined || last === undefined) return hold;
    const ran = last.runMs - first.runMs;
    const waited = last.waitMs - first.waitMs;
    const starved = waited >= STARVED_SHARE * (now - quiet.at);
    return ran >= this.#sliceMs / 2 || (ran + waited > 0 && !starved) ? hold : undefined;
  }

  /**
   * Moves the calls waiting behind `held`'s running call to relief workers, each tenant's in their order to
   * one worker, the tenants spread over the least busy: any of them may be the next long call, and the
   * tenants moved with it would wait behind it again.
   */
  #relieve(held: WorkerProcess, hold: Hold): void {
    const targets = new Map<TenantId, WorkerProcess | undefined>();
    for (const [id, entry] of hold.behind) {
      const tenantId = entry.call.tenantId;
      let target = targets.get(tenantId);
      if (!targets.has(tenantId)) {
        target = this.#reliefFor(held);
        targets.set(tenantId, target);
      }
      if (target === undefined) continue;
      target.resend(entry, "relief");
      held.takeBack(id);
      this.#divert(entry.call, target, true);
    }
  }

  /**
   * The worker to take over calls from `held`: the least busy one that is ready, accepting and not held
   * itself; when every other is held too (a busy machine makes healthy workers look held), the one held
   * for the shortest time, if shorter than `held`. None when that worker's queue is longer than what would
   * gain by the move (`RELIEF_QUEUE_MIN` calls, or half of those held): under pipelined load every worker
   * has a long queue, and moving calls between them only makes both load the tenants' bundles again.
   */
  #reliefFor(held: WorkerProcess): WorkerProcess | undefined {
    const target = this.#leastBusy(held);
    if (target === undefined) return undefined;
    return target.pending.size <= RELIEF_QUEUE_MIN ? target : undefined;
  }

  #leastBusy(held: WorkerProcess): WorkerProcess | undefined {
    let free: WorkerProcess | undefined;
    let latest: WorkerProcess | undefined;
    let latestSince = this.#held.get(held)?.since ?? Number.POSITIVE_INFINITY;
    for (const worker of this.#source.targets()) {
      if (worker === held || !worker.ready || !worker.accepting) continue;
      if (!this.#isHeld(worker)) {
        if (free === undefined || worker.pending.size < free.pending.size) free = worker;
        continue;
      }
      const since = this.#held.get(worker)?.since ?? Number.NEGATIVE_INFINITY;
      if (since > latestSince) {
        latest = worker;
        latestSince = since;
      }
    }
    return free ?? latest;
  }

  /** Held until it answers the call that held it (or stops taking calls); forgotten then. */
  #isHeld(worker: WorkerProcess): boolean {
    const held = this.#held.get(worker);
    if (held === undefined) return false;
    if (held.id !== undefined && worker.pending.get(held.id) === held.entry && worker.accepting) return true;
    this.#held.delete(worker);
    return false;
  }

  /** `moved`: taken off a held worker now (a call `route` sent here keeps the diversion's time). */
  #divert(call: SandboxCall, worker: WorkerProcess, moved: boolean): void {
    const diversion = this.#diverted.get(call.tenantId);
    if (diversion === undefined) {
      this.#diverted.set(call.tenantId, { worker, calls: new Set([call]), heldAt: performance.now() });
      return;
    }
    diversion.worker = worker;
    diversion.calls.add(call);
    if (moved) diversion.heldAt = performance.now();
  }
}

/** The id `entry` is pending under on `worker` (a look through a few pending calls, once per hold seen). */
function idOf(worker: WorkerProcess, entry: PendingCall): number | undefined {
  for (const [id, pending] of worker.pending) if (pending === entry) return id;
  return undefined;
}
