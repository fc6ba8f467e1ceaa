import type { WorkerRequest, WorkerResponse } from "./wire.js";

/**
 * The framed channel between the host and a sandbox worker: one duplex pipe (a socket pair the host makes
 * when it forks the worker, at the descriptor named in `CHANNEL_FD_ENV`), carrying length-prefixed frames
 * both ways. It replaces Node's IPC serialisation, which stringified the event, ctx and reply JSON strings
 * a second time (escaping every quote) and parsed them again on the other side.
 *
 * A frame is `u32 length (LE) | u8 kind | body`, `length` counting the kind byte and the body:
 * - `CALL` (host → worker, the hot path): `f64 id | f64 timeoutMs | u8 observe (0: a decision call, 1: an
 *   observe-only call)` then five strings, each `u32 byte length | UTF-8`: bundle hash, tenant id, point,
 *   eventJson, ctxJson. Any other flag value decodes to the id alone, which the guard refuses: the worker
 *   answers that call `unavailable`.
 * - `REPLIED` (worker → host, the hot path): `f64 id | f64 cpuMs | f64 runMs | f64 loadMs (NaN: none) |
 *   u8 loadAfterRecycle (0 or 1) | u32 evicted (0: none)` then the reply string. Any other flag value does
 *   not decode: the host takes the frame as malformed.
 * - `JSON`: one `WorkerRequest` or `WorkerResponse` as JSON text (load, describe, unload, cancel, ready, failures,
 *   a reply that is not well-formed UTF-16, which UTF-8 could not carry exactly, and a call or result with a
 *   field the two binary layouts do not have: a field added to the wire is carried, never dropped).
 *
 * The JSON strings that cross (`eventJson`, `ctxJson`, `reply`) are written as they are: never stringified
 * again. Decoding builds the same objects the wire schemas describe (wire.ts) and nothing more; the caller
 * still checks each with `isWorkerRequest` / `isWorkerResponse`, because a worker is less trusted than its
 * host: any frame it sends may be garbage, cut short or absurdly long.
 */

export const CHANNEL_FD_ENV = "ISOHOOK_CHANNEL_FD";

/**
 * A frame from a worker longer than this breaks the channel (the worker is killed): the longest reply the
 * limits allow (16 Mi + 1 Mi + 1 Mi characters of result, state and logs) is at most 54 MiB of UTF-8.
 */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

const FRAME_CALL = 1;
const FRAME_REPLIED = 2;
const FRAME_JSON = 3;

const LENGTH_BYTES = 4;
/** `f64 id | f64 timeoutMs | u8 observe`. */
const CALL_FIXED_BYTES = 17;
/** `f64 id | f64 cpuMs | f64 runMs | f64 loadMs | u8 loadAfterRecycle | u32 evicted`. */
const REPLIED_FIXED_BYTES = 37;
const MAX_U32 = 2 ** 32 - 1;
/** Room for one UTF-16 code unit in UTF-8: at most 3 bytes (a surrogate pair, 2 units, takes 4). */
const MAX_UTF8_PER_UNIT = 3;

type Message = WorkerRequest | WorkerResponse;

/** `String.prototype.isWellFormed` (ES2024, in every Node isohook supports; the project's `lib` is ES2022). */
const isWellFormed = (String.prototype as unknown as { isWellFormed(this: string): boolean }).isWellFormed;

/** The bytes of one batch of messages, in order: one write for the whole batch. */
export function encodeFrames(batch: readonly Message[]): Buffer {
  let bound = 0;
  const json: (string | undefined)[] = new Array(batch.length);
  for (let i = 0; i < batch.length; i++) {
    const message = batch[i] as Message;
    if (isPlainCall(message)) {
      const { call } = message;
      const chars =
        message.bundleHash.length +
        call.tenantId.length +
        call.point.length +
        call.eventJson.length +
        call.ctxJson.length;
      bound += LENGTH_BYTES + 1 + CALL_FIXED_BYTES + 5 * 4 + chars * MAX_UTF8_PER_UNIT;
    } else if (isPlainReply(message)) {
      bound += LENGTH_BYTES + 1 + REPLIED_FIXED_BYTES + 4 + message.result.reply.length * MAX_UTF8_PER_UNIT;
    } else {
      const text = JSON.stringify(message);
      json[i] = text;
      bound += LENGTH_BYTES + 1 + text.length * MAX_UTF8_PER_UNIT;
    }
  }
  const out = Buffer.allocUnsafe(bound);
  let at = 0;
  for (let i = 0; i < batch.length; i++) {
    const message = batch[i] as Message;
    const start = at;
    at += LENGTH_BYTES;
    const text = json[i];
    if (text !== undefined) {
      out[at++] = FRAME_JSON;
      at += out.write(text, at, "utf8");
    } else if (message.kind === "call") {
      // isPlainCall held in the first pass.
      out[at++] = FRAME_CALL;
      const { call } = message;
      out.writeDoubleLE(message.id, at);
      out.writeDoubleLE(call.timeoutMs, at + 8);
      out[at + 16] = call.priority === "observe" ? 1 : 0;
      at += CALL_FIXED_BYTES;
      at = writeString(out, at, message.bundleHash);
      at = writeString(out, at, call.tenantId);
      at = writeString(out, at, call.point);
      at = writeString(out, at, call.eventJson);
      at = writeString(out, at, call.ctxJson);
    } else if (message.kind === "result" && message.result.type === "replied") {
      const { result } = message;
      out[at++] = FRAME_REPLIED;
      out.writeDoubleLE(message.id, at);
      out.writeDoubleLE(result.cpuMs, at + 8);
      out.writeDoubleLE(result.runMs, at + 16);
      out.writeDoubleLE(result.loadMs ?? Number.NaN, at + 24);
      out[at + 32] = result.loadAfterRecycle === true ? 1 : 0;
      out.writeUInt32LE(result.evicted ?? 0, at + 33);
      at = writeString(out, at + REPLIED_FIXED_BYTES, result.reply);
    }
    out.writeUInt32LE(at - start - LENGTH_BYTES, start);
  }
  return out.subarray(0, at);
}

const CALL_KEYS = new Set(["kind", "id", "bundleHash", "call"]);
const SANDBOX_CALL_KEYS = new Set(["tenantId", "point", "eventJson", "ctxJson", "timeoutMs", "priority"]);
const RESULT_KEYS = new Set(["kind", "id", "result"]);
const REPLIED_KEYS = new Set(["type", "reply", "cpuMs", "runMs", "loadMs", "loadAfterRecycle", "evicted"]);

/** Own keys all in `keys` (a field the binary layout does not know sends the message as JSON: none is dropped). */
function onlyKeys(value: object, keys: ReadonlySet<string>): boolean {
  for (const key in value) if (!keys.has(key)) return false;
  return true;
}

/** A call the `CALL` layout carries whole. */
function isPlainCall(message: Message): message is Extract<WorkerRequest, { kind: "call" }> {
  return (
    message.kind === "call" &&
    (message.call.priority === undefined || message.call.priority === "observe") &&
    onlyKeys(message, CALL_KEYS) &&
    onlyKeys(message.call, SANDBOX_CALL_KEYS)
  );
}

/**
 * A result the `REPLIED` layout carries whole: a reply UTF-8 carries exactly (`isWellFormed`: no lone
 * surrogate), and no field beyond the layout's.
 */
function isPlainReply(message: Message): message is Extract<WorkerResponse, { kind: "result" }> & {
  result: { type: "replied" };
} {
  const evicted = message.kind === "result" ? message.result.evicted : undefined;
  return (
    message.kind === "result" &&
    message.result.type === "replied" &&
    (evicted === undefined || (Number.isSafeInteger(evicted) && evicted > 0 && evicted <= MAX_U32)) &&
    isWellFormed.call(message.result.reply) &&
    onlyKeys(message, RESULT_KEYS) &&
    onlyKeys(message.result, REPLIED_KEYS)
  );
}

function writeString(out: Buffer, at: number, text: string): number {
  const written = out.write(text, at + 4, "utf8");
  out.writeUInt32LE(written, at);
  return at + 4 + written;
}

/**
 * Reassembles frames from the chunks a pipe delivers (a frame may span many reads, a read may hold many
 * frames) and hands each one's kind and bytes to `onFrame`. A length of 0 or over `maxFrameBytes` breaks the
 * stream at once, before its bytes arrive: `push` returns false and reads nothing more.
 */
export class FrameReader {
  readonly #maxFrameBytes: number;
  readonly #onFrame: (frame: Buffer, start: number, end: number) => void;
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** Bytes needed before the next frame can be read whole. */
  #need = LENGTH_BYTES;
  #broken = false;

  constructor(onFrame: (frame: Buffer, start: number, end: number) => void, maxFrameBytes = MAX_FRAME_BYTES) {
    this.#onFrame = onFrame;
    this.#maxFrameBytes = maxFrameBytes;
  }

  /** Bytes held of a frame not yet complete: what a stream that ends here leaves cut short. */
  get buffered(): number {
    return this.#buffered;
  }

  /** Takes one chunk; false once the stream is broken (a length prefix out of range). */
  push(chunk: Buffer): boolean {
    if (this.#broken) return false;
    let bytes = chunk;
    if (this.#buffered > 0) {
      this.#chunks.push(chunk);
      this.#buffered += chunk.length;
      if (this.#buffered < this.#need) return true;
      bytes = Buffer.concat(this.#chunks, this.#buffered);
      this.#chunks = [];
      this.#buffered = 0;
    }
    let at = 0;
    while (bytes.length - at >= LENGTH_BYTES) {
      const length = bytes.readUInt32LE(at);
      if (length < 1 || length > this.#maxFrameBytes) {
        this.#broken = true;
        this.#chunks = [];
        this.#buffered = 0;
        return false;
      }
      if (bytes.length - at - LENGTH_BYTES < length) break;
      this.#onFrame(bytes, at + LENGTH_BYTES, at + LENGTH_BYTES + length);
      if (this.#broken) return false;
      at += LENGTH_BYTES + length;
    }
    if (at < bytes.length) {
      const rest = bytes.subarray(at);
      this.#chunks = [rest];
      this.#buffered = rest.length;
      this.#need = rest.length >= LENGTH_BYTES ? LENGTH_BYTES + rest.readUInt32LE(0) : LENGTH_BYTES;
    } else {
      this.#need = LENGTH_BYTES;
    }
    return true;
  }

  /** Reads nothing more (the channel was closed). */
  stop(): void {
    this.#broken = true;
    this.#chunks = [];
    this.#buffered = 0;
  }
}

/** Reads the strings of a frame body, every length checked against the frame's end. */
class BodyReader {
  at: number;
  readonly #bytes: Buffer;
  readonly #end: number;
  ok = true;

  constructor(bytes: Buffer, start: number, end: number) {
    this.#bytes = bytes;
    this.at = start;
    this.#end = end;
  }

  double(): number {
    if (this.at + 8 > this.#end) {
      this.ok = false;
      return Number.NaN;
    }
    const value = this.#bytes.readDoubleLE(this.at);
    this.at += 8;
    return value;
  }

  byte(): number {
    if (this.at + 1 > this.#end) {
      this.ok = false;
      return 0;
    }
    return this.#bytes[this.at++] ?? 0;
  }

  u32(): number {
    if (this.at + 4 > this.#end) {
      this.ok = false;
      return 0;
    }
    const value = this.#bytes.readUInt32LE(this.at);
    this.at += 4;
    return value;
  }

  string(): string {
    if (this.at + 4 > this.#end) {
      this.ok = false;
      return "";
    }
    const length = this.#bytes.readUInt32LE(this.at);
    const start = this.at + 4;
    if (length > this.#end - start) {
      this.ok = false;
      return "";
    }
    this.at = start + length;
    return this.#bytes.toString("utf8", start, this.at);
  }

  /** Every byte read, none left over, no length out of bounds. */
  get complete(): boolean {
    return this.ok && this.at === this.#end;
  }
}

/** The message in one frame as the wire objects look (unchecked: pass it to `isWorkerRequest`), or undefined. */
export function decodeRequestFrame(bytes: Buffer, start: number, end: number): unknown {
  const kind = bytes[start];
  if (kind === FRAME_JSON) return parseJson(bytes, start + 1, end);
  if (kind !== FRAME_CALL) return undefined;
  const body = new BodyReader(bytes, start + 1, end);
  const id = body.double();
  const timeoutMs = body.double();
  const observe = body.byte();
  const bundleHash = body.string();
  const tenantId = body.string();
  const point = body.string();
  const eventJson = body.string();
  const ctxJson = body.string();
  if (!body.complete) return undefined;
  if (observe > 1) return { kind: "call", id };
  const call = { tenantId, point, eventJson, ctxJson, timeoutMs };
  return { kind: "call", id, bundleHash, call: observe === 1 ? { ...call, priority: "observe" } : call };
}

/** The message in one frame as the wire objects look (unchecked: pass it to `isWorkerResponse`), or undefined. */
export function decodeResponseFrame(bytes: Buffer, start: number, end: number): unknown {
  const kind = bytes[start];
  if (kind === FRAME_JSON) return parseJson(bytes, start + 1, end);
  if (kind !== FRAME_REPLIED) return undefined;
  const body = new BodyReader(bytes, start + 1, end);
  const id = body.double();
  const cpuMs = body.double();
  const runMs = body.double();
  const loadMs = body.double();
  const flags = body.byte();
  const evicted = body.u32();
  const reply = body.string();
  if (!body.complete || flags > 1) return undefined;
  const result: Record<string, unknown> = { type: "replied", reply, cpuMs, runMs };
  // NaN is the frame's "no load"; any other value, finite or not, goes to the guard as sent.
  if (!Number.isNaN(loadMs)) result.loadMs = loadMs;
  if (flags === 1) result.loadAfterRecycle = true;
  if (evicted > 0) result.evicted = evicted;
  return { kind: "result", id, result };
}

function parseJson(bytes: Buffer, start: number, end: number): unknown {
  try {
    return JSON.parse(bytes.toString("utf8", start, end));
  } catch {
    return undefined;
  }
}
