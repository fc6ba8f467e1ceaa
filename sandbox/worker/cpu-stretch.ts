import { closeSync, openSync, readSync } from "node:fs";
import { availableParallelism } from "node:os";
import { MAX_WALL_BACKSTOP_FACTOR, MIN_WALL_BACKSTOP_FACTOR, type SandboxCall } from "../../src/protocol/index.js";

/**
 * The wall-clock backstop of `call` in whole ms (isolated-vm refuses a fractional timeout): its timeout ×
 * `wallBackstopFactor`. An observer gets the tightest backstop whatever the load: the run never waits for
 * it, but the decision calls queued behind it on its worker do (an observer starved short of its CPU time
 * then fails without a strike; its result is ignored anyway).
 */
export function callBackstopMs(call: Pick<SandboxCall, "timeoutMs" | "priority">, now?: number): number {
  const factor = call.priority === "observe" ? MIN_WALL_BACKSTOP_FACTOR : wallBackstopFactor(now);
  return Math.ceil(call.timeoutMs * factor);
}

/**
 * The wall-clock backstop of a call, as a factor of its CPU-time timeout: how much longer than its CPU
 * time a call on this thread takes by the clock now (its "stretch"), times 1.5, within
 * `[MIN_WALL_BACKSTOP_FACTOR, MAX_WALL_BACKSTOP_FACTOR]` (1.5–5). isolated-vm stops a call only by the
 * clock, so a fixed 5× let a spinning hook hold its worker 250 ms at the 50 ms default even on an idle
 * machine; sized by the load, a spinner is stopped at 1.5× on an idle machine, when it has used about 1.5×
 * its CPU limit, and a starved healthy call still has half again its stretched time.
 *
 * The stretch is the larger of two readings, taken at most every 10 ms (two reads of descriptors kept
 * open, ~2 µs each; the calls in between take the last): the machine's runnable threads per core
 * (`/proc/loadavg`, this thread counted), and this thread's own time waiting for a core against its time
 * on one since the reading before (`/proc/thread-self/schedstat`). It rises at once and falls by half the
 * difference per reading, so that one quiet moment does not shrink the next call's backstop. Where /proc
 * cannot be read, the factor is the maximum: the backstop as it was before it adapted.
 */
export function wallBackstopFactor(now: number = performance.now()): number {
  return READINGS === undefined ? MAX_WALL_BACKSTOP_FACTOR : READINGS.factor(now);
}

const SAMPLE_EVERY_MS = 10;
/** Half again the stretched time: a call's share of a core may drop between the reading and the call. */
const MARGIN = 1.5;
/** Less time than this on and off a core since the last reading says nothing about this thread's share. */
const MIN_THREAD_SPAN_NS = 2e6;

/** The readings behind `wallBackstopFactor`, from any two files and core count (the tests give fakes). */
export class StretchReadings {
  readonly #loadavg: ProcFile;
  readonly #schedstat: ProcFile;
  readonly #cores: number;
  #readAt = Number.NEGATIVE_INFINITY;
  #stretch = 1;
  #runNs: number;
  #waitNs: number;

  constructor(loadavg: ProcFile, schedstat: ProcFile, cores: number) {
    this.#loadavg = loadavg;
    this.#schedstat = schedstat;
    this.#cores = Math.max(1, cores);
    [this.#runNs, this.#waitNs] = this.#threadNs();
  }

  factor(now: number): number {
    if (now - this.#readAt >= SAMPLE_EVERY_MS) {
      this.#readAt = now;
      // Bounded, so that a spike (or a reading that makes no sense) is forgotten within a few readings.
      const read = Math.max(this.#loadStretch(), this.#threadStretch());
      const sample = Number.isFinite(read) ? Math.min(read, MAX_WALL_BACKSTOP_FACTOR) : MAX_WALL_BACKSTOP_FACTOR;
      this.#stretch = sample >= this.#stretch ? sample : (this.#stretch + sample) / 2;
    }
    return Math.min(MAX_WALL_BACKSTOP_FACTOR, Math.max(MIN_WALL_BACKSTOP_FACTOR, this.#stretch * MARGIN));
  }

  /** Runnable threads on the machine per core: `/proc/loadavg`'s fourth field is `runnable/total`. */
  #loadStretch(): number {
    const text = this.#loadavg.read();
    const slash = text.indexOf("/");
    const space = text.lastIndexOf(" ", slash);
    const runnable = Number(text.slice(space + 1, slash));
    return Math.max(1, runnable / this.#cores);
  }

  /** (on a core + waiting for one) / on a core, for this thread since the last reading; 1 when too little ran. */
  #threadStretch(): number {
    const [runNs, waitNs] = this.#threadNs();
    const ran = runNs - this.#runNs;
    const waited = waitNs - this.#waitNs;
    this.#runNs = runNs;
    this.#waitNs = waitNs;
    if (!(ran > 0) || ran + waited < MIN_THREAD_SPAN_NS) return 1;
    return (ran + Math.max(0, waited)) / ran;
  }

  /** `/proc/thread-self/schedstat`: ns on a core, ns waiting on a run queue, timeslices. */
  #threadNs(): [number, number] {
    const fields = this.#schedstat.read().split(" ");
    return [Number(fields[0]), Number(fields[1])];
  }
}

/** A /proc file read again from its start on each `read`, through a descriptor kept open. */
export interface ProcFile {
  read(): string;
}

function procFile(path: string): ProcFile | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  const bytes = Buffer.alloc(128);
  const file = { read: () => bytes.toString("latin1", 0, readSync(fd, bytes, 0, bytes.length, 0)) };
  try {
    if (file.read().length > 0) return file;
  } catch {
    // Not readable after all: no file.
  }
  closeSync(fd);
  return undefined;
}

/** One set of readings per thread that loads this module (the schedstat descriptor reads the thread that opened it). */
const READINGS = openReadings();

function openReadings(): StretchReadings | undefined {
  const loadavg = procFile("/proc/loadavg");
  const schedstat = procFile("/proc/thread-self/schedstat");
  if (loadavg === undefined || schedstat === undefined) return undefined;
  return new StretchReadings(loadavg, schedstat, availableParallelism());
}
