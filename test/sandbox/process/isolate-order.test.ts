import { describe, expect, it } from "vitest";
import { inIsolateOrder, Malformed } from "../../../sandbox/worker/worker-main.js";
import type { WorkerRequest } from "../../../src/protocol/index.js";

const A = `sha256-${"a".repeat(64)}`;
const B = `sha256-${"b".repeat(64)}`;

function call(id: number, tenantId: string, bundleHash = A, observe = false): WorkerRequest {
  const base = { tenantId, point: "tool.call", eventJson: "{}", ctxJson: "{}", timeoutMs: 50 };
  return {
    kind: "call",
    id,
    bundleHash,
    call: observe ? { ...base, priority: "observe" } : base,
  } as WorkerRequest;
}

const ids = (requests: unknown[]) =>
  requests.map((r) => (r instanceof Malformed ? r : ((r as { id?: number }).id ?? r)));

describe("the worker's serving order of one read", () => {
  it("runs the calls for one isolate back to back, groups in order of their first call, each tenant's in order", () => {
    const read = [call(0, "t1"), call(1, "t2"), call(2, "t1"), call(3, "t3"), call(4, "t2"), call(5, "t1", B)];
    expect(ids(inIsolateOrder(read))).toEqual([0, 2, 1, 4, 3, 5]);
  });

  it("puts observe-only calls after every decision call of their run", () => {
    const read = [call(0, "t1", A, true), call(1, "t2"), call(2, "t1"), call(3, "t1", A, true)];
    expect(ids(inIsolateOrder(read))).toEqual([1, 2, 0, 3]);
  });

  it("keeps loads, unloads, describes and malformed requests in place, regrouping only between them", () => {
    const load = {
      kind: "load",
      bundleHash: B,
      code: "x",
      limits: { memoryMb: 8, maxResultChars: 1, maxStateChars: 1, maxLogLines: 0, maxLogChars: 0 },
    };
    const describeB = { kind: "describe", id: 9, tenantId: "t1", bundleHash: B };
    const garbage = new Malformed({ kind: "call", id: 8 });
    const read = [
      call(0, "t1"),
      call(1, "t2"),
      call(2, "t1"),
      load,
      call(3, "t1", B),
      garbage,
      call(4, "t2"),
      call(5, "t1"),
      call(6, "t2"),
      describeB,
    ];
    expect(ids(inIsolateOrder(read as WorkerRequest[]))).toEqual([0, 2, 1, load, 3, garbage, 4, 6, 5, 9]);
  });
});
