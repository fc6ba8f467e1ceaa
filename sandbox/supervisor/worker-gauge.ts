import { readFileSync } from "node:fs";

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

/** Reads worker `pid`'s main-thread schedule (one small /proc read, ~10 µs), or undefined where there is none. */
export function scheduleOf(pid: number): ThreadSchedule | undefined {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "latin1").split(" ");
    const runMs = Number(run) / 1e6;
    const waitMs = Number(wait) / 1e6;
    return Number.isFinite(runMs) && Number.isFinite(waitMs) ? { runMs, waitMs } : undefined;
  } catch {
    return undefined;
  }
}

/** What a call did between two gauges of its worker: the CPU it burnt and how much the worker grew. */
export interface Overdue {
  readonly cpuMs: number;
  readonly grewBytes: number;
}

export function overdueBetween(first: WorkerGauge, last: WorkerGauge): Overdue {
  return { cpuMs: Math.max(0, last.cpuMs - first.cpuMs), grewBytes: last.rssBytes - first.rssBytes };
}
