import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeRequestFrame,
  decodeResponseFrame,
  encodeFrames,
  FrameReader,
  isWorkerRequest,
  isWorkerResponse,
  type WorkerRequest,
  type WorkerResponse,
} from "../../src/protocol/index.js";

const HASH = `sha256-${"a".repeat(64)}`;
const CALL = { tenantId: "t1", point: "tool.call", eventJson: "{}", ctxJson: "{}", timeoutMs: 50 };
const LIMITS = { memoryMb: 32, maxResultChars: 65_536, maxStateChars: 16_384, maxLogLines: 50, maxLogChars: 8_192 };

const text = fc.string({ unit: "binary", maxLength: 200 });
const call = fc
  .record({
    id: fc.nat(),
    eventJson: text,
    ctxJson: text,
    timeoutMs: fc.integer({ min: 1, max: 2 ** 31 }),
    observe: fc.boolean(),
  })
  .map(
    ({ id, eventJson, ctxJson, timeoutMs, observe }): WorkerRequest => ({
      kind: "call",
      id,
      bundleHash: HASH as never,
      call: {
        tenantId: "t1" as never,
        point: "tool.call",
        eventJson,
        ctxJson,
        timeoutMs,
        ...(observe ? { priority: "observe" as const } : {}),
      },
    }),
  );
const request = fc.oneof(
  call,
  fc.constant<WorkerRequest>({
    kind: "load",
    bundleHash: HASH as never,
    code: "var x = '\u2028\ud800'",
    limits: LIMITS,
  }),
  fc.constant<WorkerRequest>({ kind: "unload", bundleHash: HASH as never }),
);
const cost = { cpuMs: fc.double({ noNaN: true, noDefaultInfinity: true }), runMs: fc.double({ min: 0, noNaN: true }) };
const response = fc.oneof(
  fc
    .record({
      id: fc.nat(),
      reply: text,
      ...cost,
      loadMs: fc.option(fc.double({ min: 0, noNaN: true }), { nil: undefined }),
      own: fc.boolean(),
      evicted: fc.option(fc.integer({ min: 1, max: 2 ** 32 - 1 }), { nil: undefined }),
    })
    .map(
      ({ id, reply, cpuMs, runMs, loadMs, own, evicted }): WorkerResponse => ({
        kind: "result",
        id,
        result: {
          type: "replied",
          reply,
          cpuMs,
          runMs,
          ...(loadMs === undefined ? {} : { loadMs, ...(own ? { loadAfterRecycle: true as const } : {}) }),
          ...(evicted === undefined ? {} : { evicted }),
        },
      }),
    ),
  fc.record({ id: fc.nat(), message: text }).map(
    ({ id, message }): WorkerResponse => ({
      kind: "result",
      id,
      result: { type: "failed", failure: { code: "threw", message }, cpuMs: 1, runMs: 2 },
    }),
  ),
  fc.constant<WorkerResponse>({ kind: "ready", pid: 42 }),
);

/** Splits `bytes` at the given cut points (any order, any count) into the chunks a pipe might deliver. */
function chunked(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const to of [...points, bytes.length]) {
    if (to > from) chunks.push(bytes.subarray(from, to));
    from = to;
  }
  return chunks;
}

function readAll<T>(
  chunks: Buffer[],
  decode: (b: Buffer, s: number, e: number) => unknown,
): { messages: T[]; ok: boolean } {
  const messages: T[] = [];
  const reader = new FrameReader((bytes, start, end) => messages.push(decode(bytes, start, end) as T));
  const ok = chunks.every((chunk) => reader.push(Buffer.from(chunk)));
  return { messages, ok };
}

describe("frames", () => {
  it("carry any batch of requests exactly, however the pipe cuts the bytes", () => {
    fc.assert(
      fc.property(
        fc.array(request, { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (batch, cuts) => {
          const { messages, ok } = readAll<WorkerRequest>(chunked(encodeFrames(batch), cuts), decodeRequestFrame);
          expect(ok).toBe(true);
          expect(messages).toEqual(batch);
          expect(messages.every(isWorkerRequest)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("carry any batch of responses exactly, lone surrogates in replies and messages included", () => {
    fc.assert(
      fc.property(
        fc.array(response, { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (batch, cuts) => {
          const { messages, ok } = readAll<WorkerResponse>(chunked(encodeFrames(batch), cuts), decodeResponseFrame);
          expect(ok).toBe(true);
          expect(messages).toEqual(batch);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("carry observe-only calls and eviction counts in the binary layouts", () => {
    const call: WorkerRequest = {
      kind: "call",
      id: 3,
      bundleHash: HASH as never,
      call: { ...CALL, priority: "observe" } as never,
    };
    const result: WorkerResponse = {
      kind: "result",
      id: 3,
      result: { type: "replied", reply: "{}", cpuMs: 1, runMs: 2, loadMs: 3, evicted: 7 },
    };
    const [callFrame, resultFrame] = [encodeFrames([call]), encodeFrames([result])];
    expect([callFrame[4], resultFrame[4]]).toEqual([1, 2]);
    expect(readAll<unknown>([callFrame], decodeRequestFrame).messages).toEqual([call]);
    expect(readAll<unknown>([resultFrame], decodeResponseFrame).messages).toEqual([result]);
  });

  it("decode a call frame with an unknown flag value as its id alone, which the guard refuses", () => {
    const frame = Buffer.from(encodeFrames([{ kind: "call", id: 9, bundleHash: HASH as never, call: CALL as never }]));
    for (const flag of [2, 0x80, 0xff]) {
      frame[4 + 1 + 16] = flag;
      const decoded = decodeRequestFrame(frame, 4, frame.length);
      expect(decoded).toEqual({ kind: "call", id: 9 });
      expect(isWorkerRequest(decoded)).toBe(false);
    }
  });

  it("carry a field the binary layouts do not have, rather than drop it", () => {
    const call = { kind: "call", id: 3, bundleHash: HASH, call: { ...CALL, priority: "later" } };
    const result = { kind: "result", id: 3, result: { type: "replied", reply: "{}", cpuMs: 1, runMs: 2, extra: 1 } };
    const requests = readAll<unknown>([encodeFrames([call as never])], decodeRequestFrame);
    const responses = readAll<unknown>([encodeFrames([result as never])], decodeResponseFrame);
    expect(requests.messages).toEqual([call]);
    expect(responses.messages).toEqual([result]);
  });

  it("break the stream at a length prefix of 0 or over the cap, before its bytes arrive", () => {
    const frames: unknown[] = [];
    const reader = new FrameReader((b, s, e) => frames.push(decodeResponseFrame(b, s, e)), 1_024);
    expect(reader.push(Buffer.from([1, 4]))).toBe(true);
    expect(reader.push(Buffer.from([0, 0]))).toBe(false);
    expect(reader.push(encodeFrames([{ kind: "ready", pid: 1 }]))).toBe(false);
    expect(frames).toEqual([]);
    expect(new FrameReader(() => {}).push(Buffer.from([0, 0, 0, 0]))).toBe(false);
  });

  it("hold a frame cut short until the rest comes, and count its bytes", () => {
    const whole = encodeFrames([{ kind: "ready", pid: 7 }]);
    const frames: unknown[] = [];
    const reader = new FrameReader((b, s, e) => frames.push(decodeResponseFrame(b, s, e)));
    expect(reader.push(whole.subarray(0, whole.length - 1))).toBe(true);
    expect(frames).toEqual([]);
    expect(reader.buffered).toBe(whole.length - 1);
    expect(reader.push(whole.subarray(whole.length - 1))).toBe(true);
    expect(frames).toEqual([{ kind: "ready", pid: 7 }]);
    expect(reader.buffered).toBe(0);
  });

  it("decode a frame whose inner lengths lie, or of an unknown kind, as nothing the guards accept", () => {
    const replied = Buffer.from(
      encodeFrames([{ kind: "result", id: 1, result: { type: "replied", reply: "{}", cpuMs: 0, runMs: 0 } }]),
    );
    const body = (bytes: Buffer) => [bytes, 4, bytes.length] as const;
    const lying = Buffer.from(replied);
    lying.writeUInt32LE(1_000, 4 + 1 + 37);
    expect(decodeResponseFrame(...body(lying))).toBeUndefined();
    const flagged = Buffer.from(replied);
    flagged[4 + 1 + 32] = 2;
    expect(decodeResponseFrame(...body(flagged))).toBeUndefined();
    const unknown = Buffer.from(replied);
    unknown[4] = 9;
    expect(decodeResponseFrame(...body(unknown))).toBeUndefined();
    expect(decodeRequestFrame(...body(replied))).toBeUndefined();
    const badJson = Buffer.from([3, 0x7b, 0x7b]);
    expect(decodeResponseFrame(badJson, 0, badJson.length)).toBeUndefined();
    // A well-framed message with a field the guard refuses still reaches the guard, which refuses it.
    const negative = Buffer.from(replied);
    negative.writeDoubleLE(-1, 5);
    expect(isWorkerResponse(decodeResponseFrame(...body(negative)))).toBe(false);
  });
});
