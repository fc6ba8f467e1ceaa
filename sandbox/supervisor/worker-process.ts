import { type ChildProcess, fork } from "node:child_process";
import { Socket } from "node:net";
import {
  type BundleHash,
  type DescribeOutcome,
  isWorkerResponse,
  RUNNING_MARK_FD_ENV,
  type SandboxBundle,
  type SandboxCall,
  type SandboxLimits,
  type SandboxResult,
  type TenantId,
  type WorkerRequest,
} from "../../src/protocol/index.js";
import type { WorkerExit, WorkerExitReason } from "./events.js";
import {
  answer,
  bystanderFailure,
  culpritFailure,
  fail,
  overloaded,
  type PendingCall,
  pendingCall,
  pendingDescribe,
  retriesAfter,
  retryOf,
  timeoutFailure,
} from "./pending-call.js";
import { culpritOf, runningCall, runningSince } from "./running-call.js";
import { RunningMarkFile } from "./running-mark-file.js";
import type { WorkerSpawnSpec } from "./spawn-spec.js";

/**
 * One sandbox worker process and the host end of its IPC channel.
 *
 * Requests carry ids; the worker answers them in order, one `WorkerResponse` each. Requests made in the
 * same tick travel as one array message (and so do the worker's replies), which is what makes pipelined
 * calls cheap. Nothing is sent before the worker says `ready`. Every pending call settles exactly once:
 * with the worker's answer, or, when the process ends for any reason, as a failure — `timeout` for the
 * call the host killed the worker over, `unavailable` after `close()`, `sandbox_crashed` for the rest.
 *
 * Which call was running: the worker writes the running-call mark (src/protocol/running-mark.ts) before
 * each call. Answers travel in batches, so the oldest unanswered call may be one already done whose answer
 * died with the worker; the mark names the call that was really running. When a worker dies, that call
 * (if any) is the culprit and every other pending call is a bystander: after a crash, deadline kill or
 * protocol error a call is handed back once (`WorkerExit.retry`) for the executor to re-send to the
 * replacement (`resend`); otherwise it settles with `Failure.bystander`, which quarantine does not count
 * (DESIGN §1). Without a mark file the oldest pending call is taken instead.
 *
 * The host owns a hard deadline: the call the mark names (else the oldest pending call, taken to have
 * started when the worker last answered, became ready or was sent, whichever is latest) is killed with its
 * worker if it has not answered `killGraceMs` after its own timeout. One lazily re-armed timer per worker
 * does this: no timer per call.
 */

export interface WorkerProcessOptions {
  readonly spec: WorkerSpawnSpec;
  readonly limits: SandboxLimits;
  /** Bound on a cold call's bundle load (`loadTimeoutOf`): the deadline while the mark says it is loading. */
  readonly loadTimeoutMs: number;
  readonly killGraceMs: number;
  readonly maxPending: number;
  readonly onExit: (worker: WorkerProcess, exit: WorkerExit) => void;
}

/** A worker that never says `ready` within this is killed (tsx start-up and isolated-vm load take ~1 s). */
const BOOT_TIMEOUT_MS = 30_000;
/** Bundles kept loaded per worker; past it the least recently used is unloaded. */
const MAX_LOADED_BUNDLES = 512;
const STDERR_TAIL_CHARS = 4_096;
/** How long a worker asked to exit gets before it is killed. */
const STOP_GRACE_MS = 250;

type State = "booting" | "running" | "retiring" | "exiting" | "exited";

export class WorkerProcess {
  /** The shard this worker serves; -1 while it is the spare. */
  slot: number;
  readonly pid: number;
  /** Resolves once the worker is ready (undefined) or has ended before that (its exit). Never rejects. */
  readonly started: Promise<WorkerExit | undefined>;
  /** Resolves when the process has ended and every pending call is settled. */
  readonly exited: Promise<WorkerExit>;

  #options: WorkerProcessOptions;
  #child: ChildProcess;
  #state: State = "booting";
  #pending = new Map<number, PendingCall>();
  #nextId = 0;
  #outbox: WorkerRequest[] = [];
  #flushQueued = false;
  #progressAt = 0;
  #timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (performance.now() time). */
  #timerDue = 0;
  #loaded = new Map<BundleHash, true>();
  #wasReady = false;
  #killReason: WorkerExitReason | undefined;
  /** The call the deadline timer killed the worker over. */
  #culprit: PendingCall | undefined;
  #marks: RunningMarkFile | undefined;
  #stderrTail = "";
  #referenced = true;
  #resolveStarted!: (exit: WorkerExit | undefined) => void;
  #resolveExited!: (exit: WorkerExit) => void;

  constructor(slot: number, options: WorkerProcessOptions) {
    this.slot = slot;
    this.#options = options;
    this.started = new Promise((resolve) => {
      this.#resolveStarted = resolve;
    });
    this.exited = new Promise((resolve) => {
      this.#resolveExited = resolve;
    });
    const { spec } = options;
    const marks = RunningMarkFile.open();
    this.#marks = marks;
    this.#child = fork(spec.entry, [], {
      execArgv: [...spec.execArgv],
      cwd: spec.cwd,
      // The worker sees the mark file as fd 4, after stdin, stdout, stderr and the IPC channel.
      env: marks === undefined ? spec.env : { ...spec.env, [RUNNING_MARK_FD_ENV]: "4" },
      serialization: spec.serialization,
      stdio: marks === undefined ? ["ignore", "ignore", "pipe", "ipc"] : ["ignore", "ignore", "pipe", "ipc", marks.fd],
    });
    this.pid = this.#child.pid ?? -1;
    this.#child.on("message", this.#onMessage);
    this.#child.on("close", this.#onClose);
    this.#child.on("error", this.#onError);
    const stderr = this.#child.stderr;
    stderr?.setEncoding("utf8");
    stderr?.on("data", this.#onStderr);
    stderr?.on("error", () => {});
    setTimeout(this.#onBootTimeout, BOOT_TIMEOUT_MS).unref();
    if (this.#child.pid === undefined) this.#state = "exiting";
  }

  /** Running and taking new calls (not booting, draining or gone). */
  get accepting(): boolean {
    return this.#state === "running" || this.#state === "booting";
  }

  get ready(): boolean {
    return this.#wasReady && (this.#state === "running" || this.#state === "retiring");
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  /** The last lines the worker wrote to stderr (V8's out-of-memory report, a start-up error). */
  get stderrTail(): string {
    return this.#stderrTail;
  }

  /**
   * `call` as `admitCall` passed it (its timeout clamped). `askedAt`: when the caller asked, if it waited for
   * this worker first (counted in `queuedMs`).
   */
  execute(
    bundle: SandboxBundle,
    call: SandboxCall,
    signal: AbortSignal | undefined,
    askedAt?: number,
  ): Promise<SandboxResult> {
    if (this.#pending.size >= this.#options.maxPending)
      return Promise.resolve(overloaded(call.tenantId, this.#pending.size));
    return new Promise((resolve, reject) => {
      this.#sendCall(pendingCall(bundle, call, resolve, askedAt), signal, reject);
    });
  }

  describe(
    tenantId: TenantId,
    bundle: SandboxBundle,
    signal: AbortSignal | undefined,
    askedAt?: number,
  ): Promise<DescribeOutcome> {
    if (this.#pending.size >= this.#options.maxPending)
      return Promise.resolve(overloaded(tenantId, this.#pending.size));
    const id = this.#nextId++;
    this.#ensureLoaded(bundle);
    return new Promise((resolve, reject) => {
      this.#track(id, pendingDescribe(resolve, askedAt), signal, reject);
      this.#push({ kind: "describe", id, tenantId, bundleHash: bundle.hash });
    });
  }

  /**
   * Re-sends a bystander of another worker's death (`WorkerExit.retry`) once: its bundle is loaded first
   * if this worker lacks it, its own timeout applies from when it runs, its signal still aborts it, and
   * its `queuedMs` counts from when the caller first asked.
   */
  resend(previous: PendingCall): void {
    if (previous.kind !== "call" || previous.answered) return;
    const entry = retryOf(previous);
    const { abort, signal } = previous;
    if (abort !== undefined && signal !== undefined) {
      signal.removeEventListener("abort", abort);
      // The old listener rejects the caller's promise; this one also drops the new answer.
      this.#sendCall(entry, signal, () => abort());
    } else {
      this.#sendCall(entry, undefined, () => {});
    }
  }

  /** Loads the call's bundle if this worker lacks it, then tracks and sends the call under a new id. */
  #sendCall(entry: PendingCall & { kind: "call" }, signal: AbortSignal | undefined, reject: (reason: unknown) => void) {
    const id = this.#nextId++;
    this.#ensureLoaded(entry.bundle);
    this.#track(id, entry, signal, reject);
    this.#push({ kind: "call", id, bundleHash: entry.bundle.hash, call: entry.call });
  }

  /** Stops taking calls; the worker is killed once its pending calls are answered. */
  retire(): void {
    if (!this.accepting) return;
    this.#state = "retiring";
    if (this.#pending.size === 0) this.#kill("recycled");
  }

  /** Asks the worker to exit, killing it after 250 ms if it is stuck; pending calls settle as `unavailable`. */
  close(): Promise<WorkerExit> {
    this.#kill("closed");
    return this.exited;
  }

  /** Synchronous last resort for process exit handlers. */
  killNow(): void {
    this.#child.kill("SIGKILL");
  }

  #track(id: number, entry: PendingCall, signal: AbortSignal | undefined, reject: (reason: unknown) => void): void {
    if (signal !== undefined) {
      entry.signal = signal;
      entry.abort = () => {
        // The worker still runs the call; its answer is dropped when it comes.
        entry.answered = true;
        reject(signal.reason);
      };
      signal.addEventListener("abort", entry.abort, { once: true });
    }
    if (!this.#referenced) this.#reference(true);
    this.#pending.set(id, entry);
    if (!this.ready) return;
    // No call can be due before its own budget from now; re-arm only if the armed timer is later than that
    // (it was set for a slower call that has since answered), which is rare when budgets are alike.
    const earliest = entry.sentAt + entry.timeoutMs + this.#options.killGraceMs;
    if (this.#timer === undefined) this.#armTimer(earliest - entry.sentAt);
    else if (earliest < this.#timerDue) {
      clearTimeout(this.#timer);
      this.#armTimer(earliest - entry.sentAt);
    }
  }

  #ensureLoaded(bundle: SandboxBundle): void {
    const loaded = this.#loaded;
    if (loaded.has(bundle.hash)) {
      // Keep least-recently-used order only once eviction can matter.
      if (loaded.size > MAX_LOADED_BUNDLES / 2) {
        loaded.delete(bundle.hash);
        loaded.set(bundle.hash, true);
      }
      return;
    }
    loaded.set(bundle.hash, true);
    this.#push({ kind: "load", bundleHash: bundle.hash, code: bundle.code, limits: this.#options.limits });
    if (loaded.size > MAX_LOADED_BUNDLES) {
      for (const oldest of loaded.keys()) {
        loaded.delete(oldest);
        this.#push({ kind: "unload", bundleHash: oldest });
        break;
      }
    }
  }

  #push(request: WorkerRequest): void {
    this.#outbox.push(request);
    if (!this.#flushQueued && this.ready) {
      this.#flushQueued = true;
      queueMicrotask(this.#flush);
    }
  }

  #flush = (): void => {
    this.#flushQueued = false;
    const batch = this.#outbox;
    if (batch.length === 0) return;
    this.#outbox = [];
    if (!this.#child.connected) return;
    const first = batch[0];
    this.#child.send(batch.length === 1 && first !== undefined ? first : batch);
  };

  #onMessage = (message: unknown): void => {
    if (Array.isArray(message)) {
      for (const one of message) this.#receive(one);
    } else {
      this.#receive(message);
    }
  };

  #receive(message: unknown): void {
    // Once the host has given up on a worker, nothing it says counts: its calls settle when it is gone.
    if (this.#state === "exiting" || this.#state === "exited") return;
    if (!isWorkerResponse(message)) {
      this.#kill("protocol");
      return;
    }
    if (message.kind === "ready") {
      this.#onReady();
      return;
    }
    const entry = this.#pending.get(message.id);
    if (entry === undefined) return;
    this.#pending.delete(message.id);
    const now = performance.now();
    this.#progressAt = now;
    answer(entry, message, now);
    if (this.#pending.size === 0 && this.#state === "retiring") this.#kill("recycled");
  }

  #onReady(): void {
    if (this.#wasReady || (this.#state !== "booting" && this.#state !== "retiring")) return;
    this.#wasReady = true;
    if (this.#state === "booting") this.#state = "running";
    this.#progressAt = performance.now();
    this.#resolveStarted(undefined);
    if (this.#pending.size === 0) this.#reference(false);
    else this.#armTimer();
    if (this.#outbox.length > 0 && !this.#flushQueued) {
      this.#flushQueued = true;
      queueMicrotask(this.#flush);
    }
  }

  #armTimer(delayMs = this.#headBudget()): void {
    const delay = Math.max(1, delayMs);
    this.#timerDue = performance.now() + delay;
    this.#timer = setTimeout(this.#onTimer, delay);
    this.#timer.unref();
  }

  #headBudget(): number {
    for (const entry of this.#pending.values()) return entry.timeoutMs + this.#options.killGraceMs;
    return this.#options.killGraceMs;
  }

  #onTimer = (): void => {
    this.#timer = undefined;
    if (!this.ready) return;
    const running = runningCall(this.#pending, this.#marks?.read(), this.#progressAt);
    // Idle since the timer was armed: stop holding the host open (not per call: ref/unref cost µs each).
    if (running === undefined) {
      this.#reference(false);
      return;
    }
    // A cold call loading its bundle has the load timeout; its handler then has its own timeout.
    const budget = running.loading ? this.#options.loadTimeoutMs : running.entry.timeoutMs;
    const due = running.startedAt + budget + this.#options.killGraceMs;
    const now = performance.now();
    if (now >= due) {
      this.#culprit = running.entry;
      this.#kill("deadline");
    } else {
      this.#armTimer(due - now);
    }
  };

  #onBootTimeout = (): void => {
    if (this.#state === "booting") this.#kill("boot");
  };

  /**
   * Ends the worker. A worker drained or closed is asked to exit (it exits on `disconnect`, after the call
   * it is in), and killed if it has not within `STOP_GRACE_MS`; one that misbehaved is killed at once.
   */
  #kill(reason: WorkerExitReason): void {
    if (this.#state === "exiting" || this.#state === "exited") return;
    this.#state = "exiting";
    this.#killReason = reason;
    this.#reference(true);
    if ((reason === "closed" || reason === "recycled") && this.#child.connected) {
      // After a parent-side disconnect Node never emits `close`, so this exit settles the calls.
      this.#child.once("exit", this.#onClose);
      this.#child.disconnect();
      setTimeout(() => this.#child.kill("SIGKILL"), STOP_GRACE_MS).unref();
    } else {
      this.#child.kill("SIGKILL");
    }
  }

  /**
   * The worker keeps the host's event loop alive while it boots, has calls pending (or had, until the next
   * deadline check) or is being killed (so its exit is seen and every call settles); an idle executor does
   * not hold the host open.
   */
  #reference(on: boolean): void {
    if (this.#referenced === on) return;
    this.#referenced = on;
    const child = this.#child;
    const stderr = child.stderr;
    if (on) {
      child.ref();
      child.channel?.ref();
      if (stderr instanceof Socket) stderr.ref();
    } else {
      child.unref();
      child.channel?.unref();
      if (stderr instanceof Socket) stderr.unref();
    }
  }

  #onStderr = (chunk: string): void => {
    const tail = this.#stderrTail + chunk;
    this.#stderrTail = tail.length > STDERR_TAIL_CHARS ? tail.slice(-STDERR_TAIL_CHARS) : tail;
  };

  #onError = (): void => {
    // A failed spawn never emits `close`; a failed send on a dying channel is followed by `close`.
    if (this.#child.pid === undefined) this.#onClose(null, null);
  };

  #onClose = (exitCode: number | null, signal: NodeJS.Signals | null): void => {
    if (this.#state === "exited") return;
    const reason = this.#killReason ?? (this.#wasReady ? "crashed" : "boot");
    this.#state = "exited";
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#outbox = [];
    const now = performance.now();
    const mark = this.#marks?.read();
    this.#marks?.close();
    const culprit = culpritOf(reason, this.#pending, { kept: this.#marks !== undefined, mark }, this.#culprit);
    // The culprit ran from its start until now; every other call never ran (or its answer died with the worker).
    const ran = culprit === undefined ? undefined : runningSince(culprit, this.#pending, mark, this.#progressAt);
    const retry: PendingCall[] = [];
    const how = signal !== null ? `signal ${signal}` : `exit code ${exitCode}`;
    for (const entry of this.#pending.values()) {
      if (entry !== culprit) {
        if (retriesAfter(reason, entry)) retry.push(entry);
        else fail(entry, bystanderFailure(reason, this.pid, how), now);
      } else if (reason === "deadline") {
        const limitMs = ran?.loading === true ? this.#options.loadTimeoutMs : entry.timeoutMs;
        fail(entry, timeoutFailure(limitMs, this.#options.killGraceMs, this.pid, ran?.loading === true), now, ran);
      } else if (reason === "crashed" || reason === "protocol") {
        fail(entry, culpritFailure(reason, this.pid, how), now, ran);
      } else {
        // Other ends blame no call (culpritOf); settle it all the same.
        fail(entry, bystanderFailure(reason, this.pid, how), now);
      }
    }
    const failedCalls = this.#pending.size - retry.length;
    this.#pending.clear();
    this.#culprit = undefined;
    const exit: WorkerExit = { reason, exitCode, signal, failedCalls, retry };
    this.#resolveStarted(exit);
    this.#resolveExited(exit);
    this.#options.onExit(this, exit);
  };
}
