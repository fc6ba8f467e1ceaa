import type { ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import {
  decodeResponseFrame,
  encodeFrames,
  FrameReader,
  isWorkerResponse,
  type WorkerRequest,
  type WorkerResponse,
} from "../../src/protocol/index.js";
import type { PendingCall } from "./pending-call.js";

/** What a channel hands its worker: readiness, each result with its pending call, and a broken message. */
export interface ChannelListener {
  ready(): void;
  result(entry: PendingCall, response: Extract<WorkerResponse, { kind: "result" }>): void;
  malformed(): void;
}

/**
 * The host end of one worker's framed channel (src/protocol/frames.ts): request ids, the calls pending under
 * them, and the outbox. Requests made in the same tick travel as one write of frames (and so do the worker's
 * replies), which is what makes pipelined calls cheap; nothing is sent before the worker says `ready`.
 * Every incoming frame is decoded and checked with the allocation-free `isWorkerResponse`; a length prefix
 * out of range, a frame that does not decode, a message that fails the guard, or anything at all on Node's
 * IPC channel (which carries no messages, only the worker's lifecycle) is `malformed`. A result for an id no
 * longer pending (aborted, or settled when the worker ended) is dropped, and so is everything once closed.
 */
export class WorkerChannel {
  /** Calls sent (or queued to be) and not answered, in sending order: the oldest is first. */
  readonly pending = new Map<number, PendingCall>();
  readonly #frames: Socket;
  readonly #listener: ChannelListener;
  readonly #reader: FrameReader;
  #nextId = 0;
  #outbox: WorkerRequest[] = [];
  #flushQueued = false;
  #open = false;
  #closed = false;

  constructor(child: ChildProcess, frames: Socket, listener: ChannelListener) {
    this.#frames = frames;
    this.#listener = listener;
    this.#reader = new FrameReader(this.#onFrame);
    frames.on("data", this.#onData);
    frames.on("error", () => {});
    child.on("message", this.#onIpcMessage);
  }

  /** Tracks `entry` under a new id and returns the id; the request that carries it goes through `push`. */
  add(entry: PendingCall): number {
    const id = this.#nextId++;
    this.pending.set(id, entry);
    return id;
  }

  push(request: WorkerRequest): void {
    if (this.#closed) return;
    this.#outbox.push(request);
    if (!this.#flushQueued && this.#open) this.#queueFlush();
  }

  /** The worker is ready: send what waited for it. */
  open(): void {
    this.#open = true;
    if (this.#outbox.length > 0 && !this.#flushQueued) this.#queueFlush();
  }

  /** Nothing more goes out or comes in: the worker is being ended. */
  close(): void {
    this.#closed = true;
    this.#outbox = [];
    this.#reader.stop();
  }

  #queueFlush(): void {
    this.#flushQueued = true;
    queueMicrotask(this.#flush);
  }

  #flush = (): void => {
    this.#flushQueued = false;
    const batch = this.#outbox;
    if (batch.length === 0) return;
    this.#outbox = [];
    if (this.#closed || !this.#frames.writable) return;
    this.#frames.write(encodeFrames(batch));
  };

  #onData = (chunk: Buffer): void => {
    if (this.#closed) return;
    if (!this.#reader.push(chunk) && !this.#closed) this.#listener.malformed();
  };

  #onFrame = (bytes: Buffer, start: number, end: number): void => {
    // Once the host has given up on a worker, nothing it says counts: its calls settle when it is gone.
    if (this.#closed) return;
    const message = decodeResponseFrame(bytes, start, end);
    if (!isWorkerResponse(message)) {
      this.#listener.malformed();
      return;
    }
    if (message.kind === "ready") {
      this.#listener.ready();
      return;
    }
    const entry = this.pending.get(message.id);
    if (entry === undefined) return;
    this.pending.delete(message.id);
    this.#listener.result(entry, message);
  };

  #onIpcMessage = (): void => {
    if (!this.#closed) this.#listener.malformed();
  };
}
