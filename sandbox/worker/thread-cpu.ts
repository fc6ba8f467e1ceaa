import { closeSync, openSync, readSync } from "node:fs";

/**
 * CPU time of the calling thread, in ms: what a call's isolate used, since isolated-vm runs `applySync` on
 * the thread that calls it. Not `isolate.cpuTime`: on Linux both 5.0.4 and 7.0.1 count a synchronous
 * call's time by the wall clock (a call that sleeps 50 ms in `Atomics.wait` or waits 65 ms for a busy core
 * reports it as CPU; `scripts/probe-isolated-vm.ts`, "cpuTime-read-during-a-call" and
 * "timeout-is-wall-clock-under-load"). Read where the running Node offers it: `process.threadCpuUsage()`
 * (Node 23.9 on, ~0.5 µs), else the thread's `/proc/thread-self/schedstat` through a descriptor kept open
 * (Linux, ~2 µs), else the process's `cpuUsage()` (other threads' CPU included: an over-estimate). The
 * first two are the kernel's account of the thread, which it brings up to date at each scheduler tick and
 * context switch: a read may lag by a tick (1–4 ms), so short spans are measured otherwise (`callCpuMs`).
 */
const CLOCK = pickClock();
export const threadCpuMs: () => number = CLOCK.read;

/** Which clock `threadCpuMs` reads, for probes and the bench. */
export const THREAD_CPU_CLOCK: ClockName = CLOCK.name;

type ThreadCpuUsage = () => { readonly user: number; readonly system: number };

function threadCpuUsage(): ThreadCpuUsage | undefined {
  const read: unknown = (process as { threadCpuUsage?: unknown }).threadCpuUsage;
  return typeof read === "function" ? (read.bind(process) as ThreadCpuUsage) : undefined;
}

type ClockName = "threadCpuUsage" | "schedstat" | "cpuUsage";

function pickClock(): { readonly name: ClockName; readonly read: () => number } {
  let picked: ReturnType<typeof pickClock>;
  const usage = threadCpuUsage();
  const schedstat = usage === undefined ? schedstatClock() : undefined;
  if (usage !== undefined) {
    picked = {
      name: "threadCpuUsage",
      read: () => {
        const { user, system } = usage();
        return (user + system) / 1e3;
      },
    };
  } else if (schedstat !== undefined) {
    picked = { name: "schedstat", read: schedstat };
  } else {
    picked = {
      name: "cpuUsage",
      read: () => {
        const { user, system } = process.cpuUsage();
        return (user + system) / 1e3;
      },
    };
  }
  return picked;
}

/** `/proc/thread-self/schedstat`'s first field: ns this thread ran on a CPU. Undefined where it is missing. */
function schedstatClock(): (() => number) | undefined {
  let fd: number;
  try {
    fd = openSync("/proc/thread-self/schedstat", "r");
  } catch {
    return undefined;
  }
  const bytes = Buffer.alloc(96);
  const read = (): number => {
    const n = readSync(fd, bytes, 0, bytes.length, 0);
    const space = bytes.indexOf(0x20);
    return Number(bytes.toString("latin1", 0, space > 0 && space < n ? space : n)) / 1e6;
  };
  // The descriptor reads the thread that opened it, so the clock is only good on this thread.
  if (!Number.isFinite(read())) {
    closeSync(fd);
    return undefined;
  }
  return read;
}

/** A reading of the thread's clock stands in for a new one at a call's start while the thread was awake this
 * long (ms by the wall clock) since it. */
export const FRESH_READING_MS = 1;

/**
 * Where calls start and end on the thread's clock, read again at a start only when the thread was awake
 * longer than `FRESH_READING_MS` since the last reading (a read costs 0.5–7 µs hot, ~10 cold, a warm call
 * ~7). Otherwise the start is the last reading plus the wall time since, less the time the thread's event
 * loop slept in the kernel's poll meanwhile (`idleMs`): the thread cannot have run longer than that, so the
 * estimate is never before the true start (but for the poll calls' own few µs) and a call is never charged
 * CPU it did not use; it is late by at most the time the thread waited for a core while awake, within
 * that millisecond and within the clock's own lag of a tick.
 */
export class CallClock {
  readonly #read: () => number;
  readonly #idleMs: () => number;
  #readAt = Number.NEGATIVE_INFINITY;
  #readCpu = 0;
  #readIdle = 0;

  /** `read`: the thread's CPU clock in ms; `idleMs`: the ms its event loop has slept in the poll so far. */
  constructor(read: () => number, idleMs: () => number) {
    this.#read = read;
    this.#idleMs = idleMs;
  }

  /** The thread's clock (ms) at `now`, `performance.now()` as a call starts. */
  start(now: number): number {
    const since = now - this.#readAt;
    if (since <= FRESH_READING_MS) return this.#readCpu + since;
    const awake = since - (this.#idleMs() - this.#readIdle);
    if (awake <= FRESH_READING_MS) return this.#readCpu + Math.max(0, awake);
    return this.end(now);
  }

  /** The thread's clock read now (`now` taken just before), kept for the next `start`. */
  end(now: number): number {
    this.#readIdle = this.#idleMs();
    this.#readCpu = this.#read();
    this.#readAt = now;
    return this.#readCpu;
  }
}

/** This thread's `CallClock` (a module is loaded once per thread, as the clock and the event loop are). */
export const callClock = new CallClock(CLOCK.read, () => performance.nodeTiming.idleTime);

/** Calls shorter than this by the clock count their wall time: the thread's clock lags by up to a tick. */
export const TICK_SAFE_MS = 10;

/**
 * A call's CPU time in ms: its wall time `runMs` for a call shorter than `TICK_SAFE_MS` (what isolated-vm's
 * own `cpuTime` would say too, as it counts the wall clock; a wait that short hardly matters), else
 * `threadMs`, the thread's CPU clock over the call (read by the caller only for such calls), never more
 * than the wall time. A call whose thread time is not known counts its wall time.
 */
export function callCpuMs(threadMs: number | undefined, runMs: number): number {
  if (runMs < TICK_SAFE_MS || threadMs === undefined) return runMs;
  return Math.max(0, Math.min(runMs, threadMs));
}
