/**
 * The sandbox worker process: the channel loop around an `IsolatePool`. Forked by the supervisor
 * (sandbox/supervisor) with `--no-node-snapshot`, an IPC channel (lifecycle only: the worker exits when the
 * host disconnects, and sends nothing on it) and the framed channel (src/protocol/frames.ts) at the
 * descriptor `CHANNEL_FD_ENV` names.
 *
 * Protocol (src/protocol/wire.ts): the host sends `WorkerRequest`s as frames, many to a write; the worker
 * answers every `call` and `describe` with one `WorkerResponse` carrying the request's id. The calls of one
 * read run grouped by isolate (`inIsolateOrder`): entering another isolate costs more than the call, and 64
 * tenants taking turns would switch on every call. Answers to one read go out as one write, early if the
 * batch runs long. After a call of 2 ms or more the worker reads its channel before the next call, so that
 * a `cancel` for a call the host moved to another worker takes it out of the queue before it runs (it is
 * answered `unavailable`, which the host drops). `ready` goes out once, when the
 * loop listens. Each request is checked with the allocation-free `isWorkerRequest`: the host is trusted but
 * the channel must not fall over on garbage, so a malformed request with an id gets an `unavailable` answer
 * and one without is dropped.
 *
 * Before a call or describe the worker writes the running-call mark (src/protocol/running-mark.ts) to the
 * file descriptor the host passed, if any, so the host can tell which call it was running if it dies, and
 * rewrites it when a cold call starts and ends loading its bundle (the host's deadline for the load is the
 * load timeout, not the call's). With a backlog, the calls of one isolate next in line run under one mark
 * that lists them (running-marks.ts): one positional write a call was the worker's largest cost after the
 * isolate itself in pipelined calls.
 *
 * A read that fills Node's read buffer (`FULL_READ_BYTES`) is likely followed by more in the same turn of
 * the event loop, so its requests wait for the rest (or the check phase) before they run: larger groups,
 * fewer isolate switches, when many calls are in flight.
 *
 * No orphans: the worker exits when the host disconnects, and a watcher thread kills the process if the
 * host dies while the main thread is busy (the host's SIGKILL reparents the worker; the thread sees it).
 */
import { realpathSync } from "node:fs";
import { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import {
  CHANNEL_FD_ENV,
  decodeRequestFrame,
  encodeFrames,
  FrameReader,
  isWorkerRequest,
  MAX_MARK_MATES,
  RUNNING_MARK_FD_ENV,
  type WorkerRequest,
  type WorkerResponse,
} from "../../src/protocol/index.js";
import type { IsolatePool } from "./index.js";
import { RequestQueue } from "./request-queue.js";
import { NO_MATES, type RunningMarks, runningMarks } from "./running-marks.js";

/** What the loop needs of an `IsolatePool` (a stand-in implements it in the supervisor's tests). */
export type WorkerEngine = Pick<IsolatePool, "load" | "unload" | "call" | "describe" | "sweep" | "close">;

const SWEEP_EVERY_MS = 10_000;
/** Node's read size on a stream: a read this long leaves more waiting in the socket, read in the same turn. */
const FULL_READ_BYTES = 64 * 1024;
/** Requests waiting after a read before the calls of one isolate share running marks (until the next read). */
const SHARE_MARK_FROM = 8;
/** A batch that has run this long sends its answers so far before starting another call. */
const FLUSH_AFTER_MS = 2;
const ORPHAN_POLL_MS = 250;
/** Largest frame the worker takes from its host: any a u32 length prefix can name. */
const HOST_FRAME_BYTES = 2 ** 32 - 1;
/** Exit code of a worker whose channel from the host broke (a frame it cannot read past). */
const BROKEN_CHANNEL_EXIT = 71;
/** What a call the host took back (`cancel`) is answered; the host drops it, having sent the call elsewhere. */
const TAKEN_BACK = "The host took this call back to run it on another worker";
/** Longest an exit waits for the engine to close (a spare being made on isolated-vm's threads: ~2 ms). */
const CLOSE_BEFORE_EXIT_MS = 250;

export function serveWorker(engine: WorkerEngine): void {
  const channel = openChannel(process.env[CHANNEL_FD_ENV]);
  const marks = runningMarks(process.env[RUNNING_MARK_FD_ENV]);

  let outbox: WorkerResponse[] = [];
  let windowStart = 0;
  let flushQueued = false;
  const flush = (): void => {
    flushQueued = false;
    const batch = outbox;
    if (batch.length === 0) return;
    outbox = [];
    // The marked call's answer is on its way: the next call must name itself.
    marks.answered();
    if (channel.writable) channel.write(encodeFrames(batch));
  };
  const queue = (response: WorkerResponse): void => {
    outbox.push(response);
    if (!flushQueued) {
      flushQueued = true;
      queueMicrotask(flush);
    }
  };
  const handle = (message: WorkerRequest | Malformed): void => {
    // A long batch sends what it has answered before starting another call: the host reads answers as
    // progress, and its deadline for a call counts from the answer before it.
    if (outbox.length > 0 && performance.now() - windowStart >= FLUSH_AFTER_MS) {
      flush();
      windowStart = performance.now();
    }
    const response = message instanceof Malformed ? malformed(message.message) : serve(engine, message, marks, matesOf);
    if (response !== undefined) queue(response);
  };
  const waiting = new RequestQueue<WorkerRequest | Malformed>((request) =>
    request instanceof Malformed || request.kind !== "call" ? undefined : request.id,
  );
  // The calls of `call`'s isolate next in line, while a backlog is served: they may share its running mark.
  let backlog = false;
  const matesOf = (call: CallRequest): readonly number[] =>
    backlog ? waiting.leadingIds(MAX_MARK_MATES, (next) => isIsolateMate(next, call)) : NO_MATES;
  let draining = false;
  const drain = (): void => {
    draining = true;
    for (let next = waiting.next(); next !== undefined; next = waiting.next()) {
      const started = performance.now();
      handle(next);
      // After a long call, read the channel before the next one: the host may have taken back (cancelled)
      // calls that waited behind it, and runs them elsewhere.
      if (waiting.size > 0 && performance.now() - started >= FLUSH_AFTER_MS) {
        flush();
        setImmediate(() => setImmediate(drain));
        return;
      }
    }
    draining = false;
  };
  let read: (WorkerRequest | Malformed)[] = [];
  // The host is trusted and its frames are bounded by its limits (an event may be 64 Mi characters, up to
  // 192 MiB of UTF-8): no cap here beyond the length prefix's own.
  const reader = new FrameReader((bytes, start, end) => {
    const message = decodeRequestFrame(bytes, start, end);
    read.push(isWorkerRequest(message) ? message : new Malformed(message));
  }, HOST_FRAME_BYTES);

  let takeQueued = false;
  const take = (): void => {
    takeQueued = false;
    const batch = read;
    read = [];
    // Without a mark the host takes the oldest unanswered call as the running one: keep the host's order.
    for (const message of marks.kept ? inIsolateOrder(batch) : batch) {
      if (message instanceof Malformed || message.kind !== "cancel") waiting.push(message);
      else if (waiting.cancel(message.id)) queue(unavailable(message.id, TAKEN_BACK));
    }
    backlog = waiting.size >= SHARE_MARK_FROM;
    if (!draining) drain();
  };

  const exit = exitAfterClosing(engine);
  channel.on("data", (chunk: Buffer) => {
    if (outbox.length === 0) windowStart = performance.now();
    // A length prefix out of range: the stream cannot be read on, so this worker ends and its calls settle.
    if (!reader.push(chunk)) {
      exit(BROKEN_CHANNEL_EXIT);
      return;
    }
    // A full read: the rest follows in this turn (libuv reads on while reads fill), or the check phase runs them.
    if (chunk.length >= FULL_READ_BYTES) {
      if (!takeQueued) {
        takeQueued = true;
        setImmediate(take);
      }
      return;
    }
    take();
  });
  channel.on("error", () => exit(BROKEN_CHANNEL_EXIT));
  channel.on("end", () => exit(0));
  process.on("disconnect", () => exit(0));
  setInterval(() => engine.sweep(), SWEEP_EVERY_MS).unref();
  watchForOrphaning();
  queue({ kind: "ready", pid: process.pid });
}

/**
 * Exits once the engine closed (or after `CLOSE_BEFORE_EXIT_MS`): isolated-vm can crash a process that
 * exits while an isolate is being made on its threads, and a crash at exit would read as one to the host.
 */
function exitAfterClosing(engine: WorkerEngine): (code: number) => void {
  let exiting = false;
  return (code) => {
    if (exiting) return;
    exiting = true;
    const timer = new Promise<void>((resolve) => setTimeout(resolve, CLOSE_BEFORE_EXIT_MS).unref());
    void Promise.race([engine.close(), timer])
      .catch(() => {})
      .finally(() => process.exit(code));
  };
}

/** The worker's end of the framed channel; the supervisor forks it with both that and an IPC channel. */
function openChannel(fdText: string | undefined): Socket {
  const fd = Number(fdText);
  if (process.send === undefined || fdText === undefined || !Number.isSafeInteger(fd) || fd < 3) {
    throw new Error(
      `worker-main must be forked by the sandbox supervisor, with an IPC channel and a framed channel (${CHANNEL_FD_ENV})`,
    );
  }
  return new Socket({ fd, readable: true, writable: true });
}

/**
 * The requests of one read in the order to serve them: each run of calls between other requests (loads,
 * unloads, describes, malformed frames keep their places) regrouped so that the calls for one isolate (tenant,
 * bundle, decision or observe) run back to back, groups in the order of their first call, observe-only
 * calls after every decision call of the run (never ahead of one). A tenant's calls keep their order.
 */
export function inIsolateOrder(requests: readonly (WorkerRequest | Malformed)[]): (WorkerRequest | Malformed)[] {
  const ordered: (WorkerRequest | Malformed)[] = [];
  let run: WorkerRequest[] = [];
  const endRun = (): void => {
    if (run.length > 2) regroup(run, ordered);
    else for (const call of run) ordered.push(call);
    run = [];
  };
  for (const request of requests) {
    if (!(request instanceof Malformed) && request.kind === "call") {
      run.push(request);
      continue;
    }
    endRun();
    ordered.push(request);
  }
  endRun();
  return ordered;
}

function regroup(run: readonly WorkerRequest[], into: (WorkerRequest | Malformed)[]): void {
  const groups = new Map<string, WorkerRequest[]>();
  const observers = new Map<string, WorkerRequest[]>();
  for (const request of run) {
    if (request.kind !== "call") continue;
    const key = `${request.call.tenantId}\u0000${request.bundleHash}`;
    const into = request.call.priority === "observe" ? observers : groups;
    const group = into.get(key);
    if (group === undefined) into.set(key, [request]);
    else group.push(request);
  }
  for (const group of groups.values()) for (const request of group) into.push(request);
  for (const group of observers.values()) for (const request of group) into.push(request);
}

function serve(
  engine: WorkerEngine,
  request: WorkerRequest,
  marks: RunningMarks,
  matesOf: (call: CallRequest) => readonly number[],
): WorkerResponse | undefined {
  try {
    switch (request.kind) {
      case "call":
        if (!marks.covers(request.id)) marks.start(request.id, matesOf(request));
        return { kind: "result", id: request.id, result: engine.call(request.bundleHash, request.call, marks.phase) };
      case "describe":
        marks.start(request.id, NO_MATES);
        return { kind: "result", id: request.id, result: engine.describe(request.tenantId, request.bundleHash) };
      case "load":
        engine.load(request.bundleHash, request.code, request.limits);
        return undefined;
      case "unload":
        engine.unload(request.bundleHash);
        return undefined;
      case "cancel":
        // Taken out of the queue when read (RequestQueue.cancel); never served.
        return undefined;
      default: {
        const never: never = request;
        return never;
      }
    }
  } catch (error) {
    // The pool throws only on misuse; answer rather than leave the call to the host's deadline.
    if (request.kind !== "call" && request.kind !== "describe") return undefined;
    const message = `The sandbox worker could not run the call: ${error instanceof Error ? error.message : String(error)}`;
    return unavailable(request.id, message);
  }
}

function unavailable(id: number, message: string): WorkerResponse {
  return {
    kind: "result",
    id,
    result: { type: "failed", failure: { code: "unavailable", message }, cpuMs: 0, runMs: 0 },
  };
}

type CallRequest = Extract<WorkerRequest, { kind: "call" }>;

/**
 * Whether `next` may run under `call`'s running mark: a call in its isolate (the same tenant, bundle and
 * lane) with no longer a timeout, since the host's deadline for them all is the marked call's.
 */
function isIsolateMate(next: WorkerRequest | Malformed, call: CallRequest): boolean {
  return (
    !(next instanceof Malformed) &&
    next.kind === "call" &&
    next.call.tenantId === call.call.tenantId &&
    next.bundleHash === call.bundleHash &&
    (next.call.priority === "observe") === (call.call.priority === "observe") &&
    next.call.timeoutMs <= call.call.timeoutMs
  );
}

/** A frame that did not decode to a request the guard accepts (`isWorkerRequest`), as decoded. */
export class Malformed {
  readonly message: unknown;
  constructor(message: unknown) {
    this.message = message;
  }
}

function malformed(message: unknown): WorkerResponse | undefined {
  const id = typeof message === "object" && message !== null && "id" in message ? message.id : undefined;
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 0) return undefined;
  return unavailable(id, "The sandbox worker received a malformed request");
}

/**
 * A thread that SIGKILLs this process once its parent is gone (reparenting changes `ppid`). `disconnect`
 * covers the usual case; this covers a host killed while the main thread is inside a long call.
 */
function watchForOrphaning(): void {
  const source = `
    const { workerData } = require("node:worker_threads");
    const cell = new Int32Array(new SharedArrayBuffer(4));
    for (;;) {
      Atomics.wait(cell, 0, 0, ${ORPHAN_POLL_MS});
      if (process.ppid !== workerData) process.kill(process.pid, "SIGKILL");
    }`;
  const thread = new Worker(source, { eval: true, workerData: process.ppid, execArgv: [] });
  thread.unref();
}

function isMainModule(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMainModule()) {
  // Loaded here, not at the top, so a stand-in engine can reuse the loop without isolated-vm.
  const { IsolatePool } = await import("./index.js");
  serveWorker(new IsolatePool());
}
