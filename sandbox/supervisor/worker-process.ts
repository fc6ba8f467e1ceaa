import type { ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import type {
  DescribeOutcome,
  SandboxBundle,
  SandboxCall,
  SandboxLimits,
  SandboxResult,
  TenantId,
  WorkerRequest,
  WorkerResponse,
} from "../../src/protocol/index.js";
import { CallDeadline } from "./call-deadline.js";
import type { WorkerExit, WorkerExitReason } from "./events.js";
import { LoadedBundles } from "./loaded-bundles.js";
import { answer, overloaded, type PendingCall, pendingCall, pendingDescribe, resentOf } from "./pending-call.js";
import type { RunningCall } from "./running-call.js";
import { RunningMarkFile } from "./running-mark-file.js";
import { diedOutOfMemory, settleAtExit } from "./settle-exit.js";
import { forkWorker, referenceWorker, type WorkerSpawnSpec } from "./spawn-spec.js";
import { StderrTail } from "./stderr-tail.js";
import { WorkerChannel } from "./worker-channel.js";
import { ScheduleReader, type ThreadSchedule } from "./worker-gauge.js";

/**
 * One sandbox worker process: spawn, readiness, kill, exit. The stages it drives live apart: the framed
 * channel and its pending calls (worker-channel.ts), the deadline over the running call (call-deadline.ts)
 * and the bundles the worker has loaded (loaded-bundles.ts). Every pending call settles exactly once: with
 * the worker's answer, or, when the process ends for any reason, as a failure — `timeout` for the call the
 * host killed the worker over, `unavailable` after `close()`, `sandbox_crashed` for the rest.
 *
 * Which call was running: the worker writes the running-call mark (src/protocol/running-mark.ts) before
 * each call. Answers travel in batches, so the oldest unanswered call may be one already done whose answer
 * died with the worker; the mark names the call that was really running. When a worker dies, that call
 * (if any) is the culprit and every other pending call is a bystander: after a crash, deadline kill or
 * protocol error a call is handed back once (`WorkerExit.retry`) for the executor to re-send to the
 * replacement (`resend`); otherwise it settles with `Failure.bystander`, which quarantine does not count
 * (docs/architecture.md, "The trust boundary"). Without a mark file the oldest pending call is taken instead.
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
/** How long a worker asked to exit gets before it is killed. */
const STOP_GRACE_MS = 250;
/** How long after a worker's exit its pipes may still deliver what it wrote before they are cut. */
const EXIT_DRAIN_MS = 250;

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
  /** The host's end of the framed channel's socket pair. */
  #frames: Socket;
  #channel: WorkerChannel;
  #deadline: CallDeadline;
  #bundles: LoadedBundles;
  readonly #schedule: ScheduleReader;
  #state: State = "booting";
  #wasReady = false;
  #killReason: WorkerExitReason | undefined;
  /** The last lines it wrote to stderr (V8's out-of-memory report, a start-up error). */
  readonly stderr: StderrTail;
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
    const marks = RunningMarkFile.open();
    const { child, frames } = forkWorker(options.spec, marks);
    this.#child = child;
    this.pid = child.pid ?? -1;
    this.#frames = frames;
    this.#channel = new WorkerChannel(this.#child, this.#frames, {
      ready: () => this.#onReady(),
      result: (entry, response) => this.#onResult(entry, response),
      malformed: () => this.#kill("protocol"),
    });
    this.#deadline = new CallDeadline(this.#channel.pending, marks, {
      pid: this.pid,
      loadTimeoutMs: options.loadTimeoutMs,
      killGraceMs: options.killGraceMs,
      onDue: () => this.#kill("deadline"),
      onIdle: () => this.#reference(false),
    });
    this.#bundles = new LoadedBundles(options.limits);
    this.#schedule = new ScheduleReader(this.pid);
    this.#child.on("close", this.#onClose);
    this.#child.on("exit", this.#onExit);
    this.#child.on("error", this.#onError);
    this.stderr = new StderrTail(this.#child.stderr);
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

  /** Calls sent and not answered by the worker, by id, oldest first (read only). */
  get pending(): ReadonlyMap<number, PendingCall> {
    return this.#channel.pending;
  }

  /** When the worker last answered or became ready. */
  get progressAt(): number {
    return this.#deadline.progressAt;
  }

  /** The call the worker is running now, as its running mark names it; undefined between calls. */
  running(): RunningCall | undefined {
    return this.#deadline.marked();
  }

  /** The worker's main thread's schedule so far (relief.ts reads it while calls wait); undefined once gone. */
  schedule(): ThreadSchedule | undefined {
    return this.#schedule.read();
  }

  /** `call` as `admitCall` passed it; `askedAt`: when the caller asked, if it waited for this worker first. */
  execute(
    bundle: SandboxBundle,
    call: SandboxCall,
    signal: AbortSignal | undefined,
    askedAt?: number,
  ): Promise<SandboxResult> {
    const pending = this.#channel.pending.size;
    if (pending >= this.#options.maxPending) return Promise.resolve(overloaded(call.tenantId, pending));
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
    const pending = this.#channel.pending.size;
    if (pending >= this.#options.maxPending) return Promise.resolve(overloaded(tenantId, pending));
    this.#bundles.ensure(bundle, this.#push);
    return new Promise((resolve, reject) => {
      const id = this.#track(pendingDescribe(resolve, askedAt), signal, reject);
      this.#channel.push({ kind: "describe", id, tenantId, bundleHash: bundle.hash });
    });
  }

  /**
   * Re-sends a call pending on another worker: a bystander of its death (`WorkerExit.retry`, once) or a
   * call held there behind a long one (`relief`, which the other worker is then told to skip: `takeBack`).
   * Its bundle is loaded first if this worker lacks it, its own timeout applies from when it runs, its
   * signal still aborts it, and its `queuedMs` counts from when the caller first asked.
   */
  resend(previous: PendingCall, why: "retry" | "relief" = "retry"): void {
    if (previous.kind !== "call" || previous.answered) return;
    const entry = resentOf(previous, why);
    const { abort, signal } = previous;
    if (abort !== undefined && signal !== undefined) {
      signal.removeEventListener("abort", abort);
      // The old listener rejects the caller's promise; this one also drops the new answer.
      this.#sendCall(entry, signal, () => abort());
    } else {
      this.#sendCall(entry, undefined, () => {});
    }
  }

  /** Gives up the call pending under `id`, re-sent elsewhere: the worker skips it if it has not run it yet. */
  takeBack(id: number): void {
    const entry = this.#channel.pending.get(id);
    if (entry === undefined) return;
    entry.answered = true;
    this.#channel.push({ kind: "cancel", id });
  }

  /** Loads the call's bundle if this worker lacks it, then tracks and sends the call under a new id. */
  #sendCall(entry: PendingCall & { kind: "call" }, signal: AbortSignal | undefined, reject: (reason: unknown) => void) {
    this.#bundles.ensure(entry.bundle, this.#push);
    const id = this.#track(entry, signal, reject);
    this.#channel.push({ kind: "call", id, bundleHash: entry.bundle.hash, call: entry.call });
  }

  /** Stops taking calls; the worker is killed once its pending calls are answered. */
  retire(): void {
    if (!this.accepting) return;
    this.#state = "retiring";
    if (this.#channel.pending.size === 0) this.#kill("recycled");
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

  /** Tracks `entry` under a new id (returned), with its abort, and under the deadline once the worker is ready. */
  #track(entry: PendingCall, signal: AbortSignal | undefined, reject: (reason: unknown) => void): number {
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
    const id = this.#channel.add(entry);
    if (this.ready) this.#deadline.sent(entry);
    return id;
  }

  #push = (request: WorkerRequest): void => {
    this.#channel.push(request);
  };

  #onResult(entry: PendingCall, response: Extract<WorkerResponse, { kind: "result" }>): void {
    const now = performance.now();
    this.#deadline.progress(now);
    answer(entry, response, now);
    if (this.#channel.pending.size === 0 && this.#state === "retiring") this.#kill("recycled");
  }

  #onReady(): void {
    if (this.#wasReady || (this.#state !== "booting" && this.#state !== "retiring")) return;
    this.#wasReady = true;
    if (this.#state === "booting") this.#state = "running";
    this.#resolveStarted(undefined);
    this.#deadline.start();
    if (this.#channel.pending.size === 0) this.#reference(false);
    this.#channel.open();
  }

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
    this.#channel.close();
    this.#deadline.halt();
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

  /** See `referenceWorker`: references are toggled only when they change (each toggle costs µs). */
  #reference(on: boolean): void {
    if (this.#referenced === on) return;
    this.#referenced = on;
    referenceWorker(this.#child, this.#frames, on);
  }

  /**
   * The process is gone; its calls settle on `close`, once its pipes have delivered what it wrote before it
   * died. That is buffered already, so it is read within this turn of the event loop and the next; frames
   * after that come from whoever else holds the pipe (a child of a compromised worker that inherited it)
   * and are dropped. Nor may such a pipe hold the calls: after `EXIT_DRAIN_MS` the host cuts its pipes and
   * settles without waiting for `close`.
   */
  #onExit = (exitCode: number | null, signal: NodeJS.Signals | null): void => {
    setImmediate(() => setImmediate(() => this.#channel.close()));
    setTimeout(() => {
      if (this.#state === "exited") return;
      this.#frames.destroy();
      this.#child.stderr?.destroy();
      if (this.#child.connected) this.#child.disconnect();
      this.#onClose(exitCode, signal);
    }, EXIT_DRAIN_MS);
  };

  #onError = (): void => {
    // A failed spawn never emits `close`; a failed send on a dying channel is followed by `close`.
    if (this.#child.pid === undefined) this.#onClose(null, null);
  };

  #onClose = (exitCode: number | null, signal: NodeJS.Signals | null): void => {
    if (this.#state === "exited") return;
    const reason = this.#killReason ?? (this.#wasReady ? "crashed" : "boot");
    this.#state = "exited";
    this.#channel.close();
    this.#schedule.close();
    const now = performance.now();
    const pending = this.#channel.pending;
    const how = signal !== null ? `signal ${signal}` : `exit code ${exitCode}`;
    const { loadTimeoutMs, killGraceMs, limits } = this.#options;
    const outOfMemory = diedOutOfMemory(this.stderr.text);
    const ended = { reason, pid: this.pid, how, loadTimeoutMs, killGraceMs, memoryMb: limits.memoryMb, outOfMemory };
    // Calls aborted or taken back (`takeBack`) are answered already: they do not fail here.
    const unanswered = [...pending.values()].filter((entry) => !entry.answered).length;
    const retry = settleAtExit(pending.values(), ended, this.#deadline.blame(reason), now);
    const failedCalls = unanswered - retry.length;
    pending.clear();
    const exit: WorkerExit = { reason, exitCode, signal, failedCalls, retry };
    this.#resolveStarted(exit);
    this.#resolveExited(exit);
    this.#options.onExit(this, exit);
  };
}
