import { readlinkSync } from "node:fs";
import { Worker } from "node:worker_threads";
import * as ivm from "./isolated-vm.js";

/**
 * Stops a running call when its thread's CPU time reaches the call's timeout, not at the wall-clock
 * backstop. `applySync` holds the calling thread and isolated-vm times it by the wall clock only
 * (architecture rule 10), so two helpers off this thread share one small `SharedArrayBuffer` with it:
 *
 * - a **watcher** (a Node worker thread) that, while calls run, reads this thread's CPU clock every 1–5 ms
 *   (`/proc/self/task/<tid>/schedstat`, readable from any thread) and flags the call once it used its
 *   limit; it parks when no call ran for a while, and the next call wakes it;
 * - a **stopper** (a trusted isolate of our own, looping on isolated-vm's thread pool) that holds a handle
 *   on every tenant isolate the pool opened and, when flagged, disposes the running one: isolated-vm
 *   terminates it and the call's `applySync` throws. No tenant code ever enters the stopper; its loop waits
 *   for flags with `Atomics.wait` and returns when idle (a waiting task would keep the process from exiting),
 *   and this thread starts it again with the next call.
 *
 * The watcher counts a call's CPU time from its start on the watcher's clock when the pool read the same
 * clock (Node 20), else from the poll that first sees it running (Node 24's `threadCpuUsage` is another
 * clock), so it never stops a call before it used its limit (a starved watcher only stops it later): a
 * spinner is stopped within a poll or two of its limit on a quiet machine. The call's reported `cpuMs` is
 * still measured by this thread (thread-cpu.ts), whether or not the watcher saw the call. A call costs this
 * thread a few stores and loads. Where `/proc` has no per-thread clock the guard is off and the backstop
 * alone stops a call.
 */
export interface CpuGuard {
  /** Tells the stopper about a new tenant isolate; returns its slot for `start`. */
  register(isolate: ivm.Isolate): number;
  /**
   * Marks a call running in the isolate of `slot`, to be stopped past `limitMs` of CPU; `startCpuMs` is where
   * it started on this thread's schedstat clock, if the caller read that one (or a later point: the guard
   * must never count CPU the call did not use), else NaN (counted from when the watcher first sees it).
   * Returns its mark.
   */
  start(slot: number, limitMs: number, startCpuMs: number): number;
  /** Marks the call done; true when the guard stopped it at its CPU limit. */
  end(mark: number): boolean;
}

// Int32 cells, then at byte 64 two Float64s: the running call's limit in ms of CPU time, and its start on the
// watcher's clock (`/proc/…/schedstat`) when the pool read that clock, else NaN.
const RUN = 0; // mark of the running call, 0 between calls
const SLOT = 1; // slot of the isolate it runs in
const FLAG = 2; // a call the watcher found over its limit, for the stopper
const STOPPED = 3; // the last call the stopper stopped
const ARMED = 4; // 1 while a stopper loop runs or is queued
const GEN = 5; // the stopper loop's generation: bumped to make it yield to a registration
const PARKED = 6; // 1 while the watcher waits for a call with no timeout
const TICK = 7; // never notified: the watcher's sleep
const BYTES = 80;

/**
 * The watcher's sleep between polls: until the running call could have used its limit (its CPU time cannot
 * grow faster than the clock), between 1 and 5 ms. Mostly 5: a worker's calls are short, and each wake-up
 * costs CPU (at 1 ms the watcher cost pipelined calls 10–50 % more CPU on this VM).
 */
const MIN_POLL_MS = 1;
const MAX_POLL_MS = 5;
/** Polls with no call running before the watcher parks. */
const PARK_AFTER_POLLS = 40;
/** A stopper loop with no flag and no call for this long returns (a call starts it again). */
const STOPPER_IDLE_MS = 50;

const WATCHER_SOURCE = `
  const { workerData } = require("node:worker_threads");
  const fs = require("node:fs");
  const c = new Int32Array(workerData.sab, 0, 16);
  const f = new Float64Array(workerData.sab, 64, 2);
  const fd = fs.openSync("/proc/self/task/" + workerData.tid + "/schedstat", "r");
  const bytes = Buffer.alloc(96);
  const cpuMs = () => {
    const n = fs.readSync(fd, bytes, 0, bytes.length, 0);
    const space = bytes.indexOf(32);
    return Number(bytes.toString("latin1", 0, space > 0 && space < n ? space : n)) / 1e6;
  };
  const until = (ms) => Math.min(${MAX_POLL_MS}, Math.max(${MIN_POLL_MS}, ms));
  let idle = 0, seen = 0, flagged = 0, start = 0;
  for (;;) {
    let sleep = ${MAX_POLL_MS};
    const run = Atomics.load(c, ${RUN});
    if (run === 0) {
      if (++idle >= ${PARK_AFTER_POLLS}) {
        Atomics.store(c, ${PARKED}, 1);
        Atomics.wait(c, ${RUN}, 0);
        Atomics.store(c, ${PARKED}, 0);
        idle = 0;
        continue;
      }
    } else if (run !== seen) {
      // From its start on this clock when the pool read the same one, else from here: what the call used
      // before this poll is then not charged, so it is never stopped early.
      idle = 0;
      const given = f[1];
      const now = cpuMs();
      if (Atomics.load(c, ${RUN}) === run) {
        seen = run;
        start = Number.isNaN(given) ? now : Math.min(given, now);
        sleep = until(f[0] - (now - start));
      }
    } else if (run !== flagged) {
      const used = cpuMs() - start;
      if (used >= f[0]) {
        flagged = run;
        Atomics.store(c, ${FLAG}, run);
        Atomics.notify(c, ${FLAG});
      } else {
        sleep = until(f[0] - used);
      }
    }
    Atomics.wait(c, ${TICK}, 0, sleep);
  }`;

const STOPPER_SOURCE = `(function () {
  const isolates = new Map();
  let c;
  return [
    function init(sab) { c = new Int32Array(sab, 0, 16); },
    function register(slot, isolate) {
      for (const [known, held] of isolates) if (held.isDisposed) isolates.delete(known);
      isolates.set(slot, isolate);
    },
    function loop(gen) {
      for (;;) {
        if (Atomics.load(c, ${GEN}) !== gen) return;
        const flag = Atomics.load(c, ${FLAG});
        if (flag !== 0) {
          Atomics.store(c, ${FLAG}, 0);
          const isolate = Atomics.load(c, ${RUN}) === flag ? isolates.get(Atomics.load(c, ${SLOT})) : undefined;
          if (isolate !== undefined) {
            Atomics.store(c, ${STOPPED}, flag);
            try { isolate.dispose(); } catch {}
          }
          continue;
        }
        if (Atomics.wait(c, ${FLAG}, 0, ${STOPPER_IDLE_MS}) !== "timed-out" || Atomics.load(c, ${RUN}) !== 0) continue;
        Atomics.store(c, ${ARMED}, 0);
        // A call that started meanwhile saw ARMED at 1 and started no loop: this one carries on for it.
        if (Atomics.load(c, ${RUN}) === 0 || Atomics.compareExchange(c, ${ARMED}, 0, 1) !== 0) return;
      }
    },
  ];
})()`;

class ProcCpuGuard implements CpuGuard {
  readonly #cells: Int32Array;
  readonly #floats: Float64Array;
  readonly #register: ivm.Reference;
  readonly #loop: ivm.Reference;
  #slots = 0;
  #marks = 0;

  constructor(tid: string) {
    const sab = new SharedArrayBuffer(BYTES);
    this.#cells = new Int32Array(sab, 0, 16);
    this.#floats = new Float64Array(sab, 64, 2);
    const isolate = new ivm.Isolate({ memoryLimit: 8 });
    const entries = isolate.createContextSync().evalSync(STOPPER_SOURCE, { reference: true });
    const init = entries.getSync(0, { reference: true });
    init.applySync(undefined, [new ivm.ExternalCopy(sab).copyInto()]);
    this.#register = entries.getSync(1, { reference: true });
    this.#loop = entries.getSync(2, { reference: true });
    const watcher = new Worker(WATCHER_SOURCE, {
      eval: true,
      workerData: { sab, tid },
      execArgv: [],
    });
    // A watcher that fails only leaves spinning calls to the backstop.
    watcher.on("error", () => {});
    watcher.unref();
    // A stopper task still waiting when the process exits would hold the exit up: end it first.
    process.once("exit", () => this.#yield());
  }

  register(isolate: ivm.Isolate): number {
    const slot = ++this.#slots;
    const armed = Atomics.load(this.#cells, ARMED) === 1;
    if (armed) this.#yield();
    // Tasks of one isolate run in order: the registration, then the loop that replaces the one that yielded.
    this.#register.apply(undefined, [slot, isolate]).catch(() => {});
    if (armed) this.#startLoop();
    return slot;
  }

  start(slot: number, limitMs: number, startCpuMs: number): number {
    const cells = this.#cells;
    this.#floats[0] = limitMs;
    this.#floats[1] = startCpuMs;
    cells[SLOT] = slot;
    const mark = this.#marks === 0x7fffffff ? 1 : this.#marks + 1;
    this.#marks = mark;
    Atomics.store(cells, RUN, mark);
    if (cells[PARKED] === 1) Atomics.notify(cells, RUN);
    if (cells[ARMED] === 0 && Atomics.compareExchange(cells, ARMED, 0, 1) === 0) this.#startLoop();
    return mark;
  }

  end(mark: number): boolean {
    Atomics.store(this.#cells, RUN, 0);
    return Atomics.load(this.#cells, STOPPED) === mark;
  }

  #yield(): void {
    Atomics.add(this.#cells, GEN, 1);
    Atomics.notify(this.#cells, FLAG);
  }

  #startLoop(): void {
    this.#loop.apply(undefined, [Atomics.load(this.#cells, GEN)]).catch(() => {});
  }
}

/** The thread's id in `/proc`, where this thread's CPU clock can be read by another thread. */
function procThreadId(): string | undefined {
  try {
    const tid = readlinkSync("/proc/thread-self").split("/").pop();
    return tid !== undefined && /^\d+$/.test(tid) ? tid : undefined;
  } catch {
    return undefined;
  }
}

let guard: CpuGuard | null | undefined;

/**
 * This thread's guard, made on first use; undefined where the thread's CPU clock cannot be read from
 * another, or the guard could not be set up (the backstop then stops calls, as without it).
 */
export function cpuGuard(): CpuGuard | undefined {
  if (guard === undefined) {
    const tid = procThreadId();
    try {
      guard = tid === undefined ? null : new ProcCpuGuard(tid);
    } catch {
      guard = null;
    }
  }
  return guard ?? undefined;
}
