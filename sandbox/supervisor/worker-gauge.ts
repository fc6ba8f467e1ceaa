import { closeSync, openSync, readFileSync, readSync } from "node:fs";

/** A worker's main thread CPU time and its resident set, read by the host from /proc at one instant. */
export interface WorkerGauge {
  /** CPU time the worker's main thread (the one running isolates) has used since it started, in ms. */
  readonly cpuMs: number;
  readonly rssBytes: number;
}

const PAGE_BYTES = 4096;

/**
 * Reads the gauge of worker `pid` (its main thread's id is its pid), or undefined where /proc is missing
 * (not Linux) or the process is gone. Synchronous and ~20 µs: read only for a call that is past its
 * wall-clock backstop, when the host is about to kill its worker (call-deadline.ts), never per call.
 */
export function gaugeWorker(pid: number): WorkerGauge | undefined {
  try {
    const cpuNs = Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "latin1").split(" ")[0]);
    const rssPages = Number(readFileSync(`/proc/${pid}/statm`, "latin1").split(" ")[1]);
    if (!Number.isFinite(cpuNs) || !Number.isFinite(rssPages)) return undefined;
    return { cpuMs: cpuNs / 1e6, rssBytes: rssPages * PAGE_BYTES };
  } catch {
    return undefined;
  }
}

/** A worker's main thread's time on a core and waiting for one since it started, in ms. */
export interface ThreadSchedule {
  readonly runMs: number;
  readonly waitMs: number;
}

/**
 * A worker's main-thread schedule, read on demand through a descriptor kept open (one positional read,
 * ~3 µs; opening the /proc file each time costs ~25 µs, and relief reads it every millisecond a worker
 * is quiet, so a busy host spent a fifth of its time there). Undefined where /proc is missing (not Linux)
 * or the thread is gone.
 */
export class ScheduleReader {
  readonly #pid: number;
  #fd: number | undefined;
  #closed = false;
  readonly #bytes = Buffer.alloc(96);

  constructor(pid: number) {
    this.#pid = pid;
  }

  read(): ThreadSchedule | undefined {
    if (this.#closed || this.#pid <= 0) return undefined;
    try {
      this.#fd ??= openSync(`/proc/${this.#pid}/task/${this.#pid}/schedstat`, "r");
      const length = readSync(this.#fd, this.#bytes, 0, this.#bytes.length, 0);
      return scheduleIn(this.#bytes.toString("latin1", 0, length));
    } catch {
      this.close();
      return undefined;
    }
  }

  /** Releases the descriptor; later reads are undefined. Idempotent. */
  close(): void {
    this.#closed = true;
    if (this.#fd === undefined) return;
    try {
      closeSync(this.#fd);
    } catch {
      // Already closed: nothing to release.
    }
    this.#fd = undefined;
  }
}

/** `schedstat`'s first two fields (ns on a core, ns waiting for one) as a schedule in ms. */
function scheduleIn(text: string): ThreadSchedule | undefined {
  const [run, wait] = text.split(" ");
  const runMs = Number(run) / 1e6;
  const waitMs = Number(wait) / 1e6;
  return Number.isFinite(runMs) && Number.isFinite(waitMs) ? { runMs, waitMs } : undefined;
}

/** What a call did between two gauges of its worker: the CPU it burnt and how much the worker grew. */
export interface Overdue {
  readonly cpuMs: number;
  readonly grewBytes: number;
}

export function overdueBetween(first: WorkerGauge, last: WorkerGauge): Overdue {
  return { cpuMs: Math.max(0, last.cpuMs - first.cpuMs), grewBytes: last.rssBytes - first.rssBytes };
}
