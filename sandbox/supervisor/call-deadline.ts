import { maxWallBackstopOf, type RunningMark } from "../../src/protocol/index.js";
import type { WorkerExitReason } from "./events.js";
import type { PendingCall } from "./pending-call.js";
import { culpritOf, type RunningCall, runningCall, runningSince } from "./running-call.js";
import type { RunningMarkFile } from "./running-mark-file.js";
import { gaugeWorker, type Overdue, overdueBetween, type WorkerGauge } from "./worker-gauge.js";

export interface DeadlineOptions {
  /** The worker's pid, whose CPU and memory the host reads from /proc once a call is overdue. */
  readonly pid: number;
  /** Bound on a cold call's bundle load (`loadTimeoutOf`): the deadline while the mark says it is loading. */
  readonly loadTimeoutMs: number;
  readonly killGraceMs: number;
  /** The call the mark (or the oldest pending call) says is running is past its deadline: kill the worker. */
  readonly onDue: () => void;
  /** Nothing is pending: the worker may stop holding the host open. */
  readonly onIdle: () => void;
}

/** Which call a worker died in, and since when it ran: what `WorkerProcess` blames and charges at exit. */
export interface Blame {
  readonly culprit: PendingCall | undefined;
  readonly ran: RunningCall | undefined;
  /**
   * Calls still pending that ran under the culprit's mark, of its isolate (`RunningMark.mates`): one of
   * them may have been the one running, so they fail with it and are not re-sent.
   */
  readonly mates: readonly PendingCall[];
  /**
   * For a call the host killed the worker over: what the worker did while the call was overdue (from its
   * wall-clock budget to the kill), read from /proc; undefined where it could not be read.
   */
  readonly overdue?: Overdue | undefined;
}

/**
 * The host's hard deadline over one worker's calls. The call the running mark names (else the oldest
 * pending call, taken to have started when the worker last answered, became ready or was sent, whichever is
 * latest) is killed with its worker if it has not answered `killGraceMs` after its wall-clock budget: its
 * timeout's backstop (`maxWallBackstopOf`; the timeout itself is CPU time, which the worker holds it to), or
 * the load timeout while it loads its bundle. Once the call is past its budget the host reads the worker's
 * CPU time and RSS (`gaugeWorker`), and again at the kill: what the call burnt and grew while overdue says
 * whether its timeout was CPU spent (a strike) and whether it was a memory bomb (`memory_limit`). One
 * lazily re-armed timer per worker does this: no timer per call. At exit it says which call to blame.
 */
export class CallDeadline {
  readonly #pending: ReadonlyMap<number, PendingCall>;
  readonly #marks: RunningMarkFile | undefined;
  readonly #options: DeadlineOptions;
  #timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (performance.now() time). */
  #timerDue = 0;
  /** When the worker last answered or became ready. */
  #progressAt = 0;
  #armed = false;
  /** The call the timer killed the worker over. */
  #killedOver: PendingCall | undefined;
  /** The worker's gauge when the running call was first seen past its budget, and that call. */
  #overdueFrom: { readonly entry: PendingCall; readonly gauge: WorkerGauge | undefined } | undefined;
  #overdue: Overdue | undefined;

  constructor(pending: ReadonlyMap<number, PendingCall>, marks: RunningMarkFile | undefined, options: DeadlineOptions) {
    this.#pending = pending;
    this.#marks = marks;
    this.#options = options;
  }

  /** The worker is ready: deadlines run from now. */
  start(): void {
    this.#armed = true;
    this.#progressAt = performance.now();
    if (this.#pending.size > 0) this.#arm(this.#headBudget());
  }

  /** The worker answered a call at `now`. */
  progress(now: number): void {
    this.#progressAt = now;
  }

  /** When the worker last answered or became ready. */
  get progressAt(): number {
    return this.#progressAt;
  }

  /**
   * The call the running mark names, if it is still pending (one positional read); undefined when the
   * worker is between calls, or keeps no mark.
   */
  marked(): RunningCall | undefined {
    const mark = this.#marks?.read();
    const entry = mark === undefined ? undefined : this.#pending.get(mark.id);
    return entry === undefined ? undefined : runningSince(entry, this.#pending, mark, this.#progressAt);
  }

  /** A call was just sent; re-arms only if the armed timer is later than this call could be due. */
  sent(entry: PendingCall): void {
    if (!this.#armed) return;
    // No call can be overdue before its own budget from now; the armed timer is later only when it was set
    // for a slower call that has since answered, which is rare when budgets are alike.
    const delay = wallBudgetOf(entry);
    if (this.#timer === undefined) this.#arm(delay);
    else if (entry.sentAt + delay < this.#timerDue) {
      clearTimeout(this.#timer);
      this.#arm(delay);
    }
  }

  /** No more deadlines: the worker is being ended. */
  halt(): void {
    this.#armed = false;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Once the worker has ended: the call to blame for `reason`, and since when it ran. Closes the mark file. */
  blame(reason: WorkerExitReason): Blame {
    this.halt();
    const mark: RunningMark | undefined = this.#marks?.read();
    this.#marks?.close();
    const kept = this.#marks !== undefined;
    const culprit = culpritOf(reason, this.#pending, { kept, mark }, this.#killedOver);
    const overdue = culprit !== undefined && culprit === this.#killedOver ? this.#overdue : undefined;
    this.#killedOver = undefined;
    this.#overdueFrom = undefined;
    this.#overdue = undefined;
    // The culprit ran from its start until now; every other call never ran (or its answer died with the worker).
    const ran = culprit === undefined ? undefined : runningSince(culprit, this.#pending, mark, this.#progressAt);
    return { culprit, ran, mates: matesOf(culprit, mark, this.#pending), overdue };
  }

  #arm(delayMs: number): void {
    const delay = Math.max(1, delayMs);
    this.#timerDue = performance.now() + delay;
    this.#timer = setTimeout(this.#onTimer, delay);
    this.#timer.unref();
  }

  #headBudget(): number {
    for (const entry of this.#pending.values()) return wallBudgetOf(entry);
    return this.#options.killGraceMs;
  }

  #onTimer = (): void => {
    this.#timer = undefined;
    if (!this.#armed) return;
    const running = runningCall(this.#pending, this.#marks?.read(), this.#progressAt);
    // Idle since the timer was armed: stop holding the host open (not per call: ref/unref cost µs each).
    if (running === undefined) {
      this.#options.onIdle();
      return;
    }
    // A cold call loading its bundle has the load timeout; its handler then has its timeout's backstop.
    const budget = running.loading ? this.#options.loadTimeoutMs : wallBudgetOf(running.entry);
    const over = running.startedAt + budget;
    const due = over + this.#options.killGraceMs;
    const now = performance.now();
    if (now < over) {
      this.#arm(over - now);
      return;
    }
    if (this.#overdueFrom?.entry !== running.entry) {
      // First seen overdue: read the worker, then give it the rest of its grace (or, when this timer ran
      // late, a short window, so that what the call does before the kill is measured).
      this.#overdueFrom = { entry: running.entry, gauge: gaugeWorker(this.#options.pid) };
      this.#arm(now < due ? due - now : Math.min(this.#options.killGraceMs, LATE_WINDOW_MS));
      return;
    }
    if (now < due) {
      this.#arm(due - now);
      return;
    }
    const from = this.#overdueFrom.gauge;
    const last = from === undefined ? undefined : gaugeWorker(this.#options.pid);
    this.#overdue = from === undefined || last === undefined ? undefined : overdueBetween(from, last);
    this.#killedOver = running.entry;
    this.#options.onDue();
  };
}

/**
 * The pending calls the culprit's mark lists as its mates, if the mark is the culprit's. Only calls of the
 * culprit's own isolate count: the mark is the worker's word, and a worker is less trusted than its host,
 * so a mark naming another tenant's call cannot make that call fail unsent.
 */
function matesOf(
  culprit: PendingCall | undefined,
  mark: RunningMark | undefined,
  pending: ReadonlyMap<number, PendingCall>,
): PendingCall[] {
  if (culprit?.kind !== "call" || mark === undefined || pending.get(mark.id) !== culprit) return [];
  const mates: PendingCall[] = [];
  for (const id of mark.mates) {
    const mate = pending.get(id);
    if (mate !== undefined && mate !== culprit && sameIsolate(mate, culprit)) mates.push(mate);
  }
  return mates;
}

/** Whether `call` runs in `culprit`'s isolate: the same tenant, bundle and lane (decision or observe). */
function sameIsolate(call: PendingCall, culprit: PendingCall & { kind: "call" }): boolean {
  return (
    call.kind === "call" &&
    call.call.tenantId === culprit.call.tenantId &&
    call.bundle.hash === culprit.bundle.hash &&
    (call.call.priority === "observe") === (culprit.call.priority === "observe")
  );
}

/** How long a call first seen overdue past its kill grace (the host's timer ran late) is watched before the kill. */
const LATE_WINDOW_MS = 100;

/** A call's wall-clock budget: its timeout's backstop (the timeout is CPU time); a describe's own timeout. */
function wallBudgetOf(entry: PendingCall): number {
  return entry.kind === "call" ? maxWallBackstopOf(entry.timeoutMs) : entry.timeoutMs;
}
