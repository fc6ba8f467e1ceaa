import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isWorkerRequest, isWorkerResponse, WorkerRequest, WorkerResponse } from "../../../src/protocol/index.js";

const HASH = `sha256-${"a".repeat(64)}`;
const LIMITS = { memoryMb: 32, maxResultChars: 65_536, maxStateChars: 16_384, maxLogLines: 50, maxLogChars: 8_192 };
const CALL = { tenantId: "t1", point: "tool.call", eventJson: "{}", ctxJson: "{}", timeoutMs: 50 };
const VALID_REQUESTS: Record<string, unknown>[] = [
  { kind: "call", id: 0, bundleHash: HASH, call: CALL },
  { kind: "load", bundleHash: HASH, code: "var x", limits: LIMITS },
  { kind: "load", bundleHash: HASH, code: "var x", limits: { ...LIMITS, loadTimeoutMs: 1_000 } },
  { kind: "describe", id: 3, tenantId: "acme", bundleHash: HASH },
  { kind: "unload", bundleHash: HASH },
  { kind: "cancel", id: 4 },
];
const VALID_RESPONSES: Record<string, unknown>[] = [
  { kind: "ready", pid: 12 },
  { kind: "result", id: 1, result: { type: "replied", reply: "{}", cpuMs: 0.1, runMs: 0.2 } },
  {
    kind: "result",
    id: 1,
    result: { type: "failed", failure: { code: "timeout", message: "m" }, cpuMs: 50, runMs: 51 },
  },
  { kind: "result", id: 2, result: { type: "replied", reply: "{}", cpuMs: 0.1, runMs: 0.2, loadMs: 3.5 } },
  {
    kind: "result",
    id: 2,
    result: { type: "failed", failure: { code: "timeout", message: "m" }, cpuMs: 0, runMs: 0, loadMs: 1000 },
  },
  {
    kind: "result",
    id: 3,
    result: {
      type: "failed",
      failure: { code: "threw", message: "m" },
      cpuMs: 1,
      runMs: 2,
      loadMs: 900,
      loadAfterRecycle: true,
    },
  },
];

/** The nested objects of the valid messages, each with the message it sits in and its key there. */
const NESTED: [Record<string, unknown>, string][] = [
  ...VALID_REQUESTS.filter((r) => r.kind === "call").map((r): [Record<string, unknown>, string] => [r, "call"]),
  ...VALID_RESPONSES.filter((r) => r.kind === "result").map((r): [Record<string, unknown>, string] => [r, "result"]),
];

/** Values that break one field of a valid message: wrong types, edge numbers, bad ids, extra keys. */
const oddValue = fc.oneof(
  fc.constantFrom(-1, 0, 1, 7, 8, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, -0, "", "x", "T1", "../x"),
  fc.constantFrom(null, undefined, true, [], {}, `sha256-${"A".repeat(64)}`, "tool.call", "timeout", "bogus"),
  fc.anything(),
);

function mutate(keys: fc.Arbitrary<Record<string, unknown>>, depth = 1): fc.Arbitrary<unknown> {
  const nested =
    depth === 0
      ? []
      : [
          fc.constantFrom(...NESTED).chain(([message, key]) => {
            const inner = message[key] as Record<string, unknown>;
            const failure = inner.failure as Record<string, unknown> | undefined;
            const deeper =
              failure === undefined ? [] : [mutate(fc.constant(failure), 0).map((f) => ({ ...inner, failure: f }))];
            return fc.oneof(mutate(fc.constant(inner), 0), ...deeper).map((value) => ({ ...message, [key]: value }));
          }),
        ];
  return fc.oneof(
    ...nested,
    keys,
    fc.tuple(keys, fc.string(), oddValue).map(([base, key, value]) => ({ ...base, [key]: value })),
    fc.tuple(keys, fc.nat(), oddValue).map(([base, index, value]) => {
      const names = Object.keys(base);
      const name = names[index % names.length] ?? "kind";
      return { ...base, [name]: value };
    }),
    fc.tuple(keys, fc.nat()).map(([base, index]) => {
      const copy = { ...base };
      delete copy[Object.keys(copy)[index % Object.keys(copy).length] ?? "kind"];
      return copy;
    }),
    fc.tuple(keys, fc.nat(), keys).map(([base, index, other]) => {
      const name = Object.keys(other)[index % Object.keys(other).length] ?? "kind";
      return { ...base, [name]: other[name] };
    }),
    fc.anything(),
  );
}

describe("wire guards", () => {
  it("accept every well-formed request and response", () => {
    for (const request of VALID_REQUESTS) expect(isWorkerRequest(request)).toBe(true);
    for (const response of VALID_RESPONSES) expect(isWorkerResponse(response)).toBe(true);
  });

  it("agree with the WorkerRequest schema on mutated requests", () => {
    fc.assert(
      fc.property(mutate(fc.constantFrom(...VALID_REQUESTS)), (value) => {
        expect(isWorkerRequest(value)).toBe(WorkerRequest.safeParse(value).success);
      }),
      { numRuns: 3_000 },
    );
  });

  it("agree with the WorkerResponse schema on mutated responses", () => {
    fc.assert(
      fc.property(mutate(fc.constantFrom(...VALID_RESPONSES)), (value) => {
        expect(isWorkerResponse(value)).toBe(WorkerResponse.safeParse(value).success);
      }),
      { numRuns: 3_000 },
    );
  });

  it("reject nested garbage in load limits", () => {
    const load = VALID_REQUESTS[1] ?? {};
    expect(isWorkerRequest({ ...load, limits: { ...LIMITS, memoryMb: 4 } })).toBe(false);
    expect(isWorkerRequest({ ...load, limits: { ...LIMITS, extra: 1 } })).toBe(false);
    expect(isWorkerRequest({ ...load, limits: [] })).toBe(false);
  });

  it("reject a worker's result that claims what only the host may say", () => {
    const result = (value: Record<string, unknown>) => ({ kind: "result", id: 1, result: value });
    const failed = { type: "failed", cpuMs: 0, runMs: 0 };
    // Bystander marks, crash and quarantine codes are the host's to give, never a worker's.
    expect(isWorkerResponse(result({ ...failed, failure: { code: "timeout", message: "m", bystander: true } }))).toBe(
      false,
    );
    expect(isWorkerResponse(result({ ...failed, failure: { code: "sandbox_crashed", message: "m" } }))).toBe(false);
    expect(isWorkerResponse(result({ ...failed, failure: { code: "quarantined", message: "m" } }))).toBe(false);
    // The host completes queuedMs itself; a worker that sends one is broken.
    expect(isWorkerResponse(result({ type: "replied", reply: "{}", cpuMs: 0, runMs: 0, queuedMs: 0 }))).toBe(false);
    expect(isWorkerResponse(result({ type: "replied", reply: "{}", cpuMs: 0, runMs: Number.NaN }))).toBe(false);
    expect(isWorkerResponse(result({ type: "replied", reply: 42, cpuMs: 0, runMs: 0 }))).toBe(false);
    // A reload is either the tenant's (true) or not said at all.
    const reload = { type: "replied", reply: "{}", cpuMs: 0, runMs: 0, loadMs: 5 };
    expect(isWorkerResponse(result({ ...reload, loadAfterRecycle: false }))).toBe(false);
    expect(isWorkerResponse(result({ ...reload, loadAfterRecycle: true }))).toBe(true);
  });

  it("reject nested garbage in a call", () => {
    const call = (value: Record<string, unknown>) => ({ kind: "call", id: 0, bundleHash: HASH, call: value });
    expect(isWorkerRequest(call({ ...CALL, timeoutMs: 0 }))).toBe(false);
    expect(isWorkerRequest(call({ ...CALL, tenantId: "../x" }))).toBe(false);
    expect(isWorkerRequest(call({ ...CALL, code: "var x" }))).toBe(false);
    expect(isWorkerRequest(call([] as never))).toBe(false);
  });
});
