import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, maxReplyChars, parseGuestReply } from "../../src/protocol/index.js";

const limits = DEFAULT_LIMITS;
const returned = (result: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ kind: "returned", result, logs: [], ...extra });

describe("parseGuestReply", () => {
  it("decides a valid result with its state and logs", () => {
    const reply = returned({ type: "block", reason: "no" }, { state: { n: 1 }, logs: ["checked"] });
    expect(parseGuestReply("tool.call", reply, limits)).toEqual({
      type: "decided",
      result: { type: "block", reason: "no" },
      state: { n: 1 },
      logs: ["checked"],
    });
  });

  it("treats a null result as the no-op at every point, run.end included", () => {
    for (const point of ["tool.call", "run.end", "turn.end"] as const) {
      expect(parseGuestReply(point, returned(null), limits)).toEqual({
        type: "decided",
        result: null,
        state: undefined,
        logs: [],
      });
    }
  });

  it.each([
    [42, "number"],
    [undefined, "undefined"],
    [{ kind: "returned", result: null, logs: [] }, "object"],
    [null, "object"],
  ])("fails a non-string reply %j as invalid_result", (reply, type) => {
    expect(parseGuestReply("tool.call", reply, limits)).toEqual({
      type: "failed",
      failure: { code: "invalid_result", message: `The hook's reply was a ${type}, not a string` },
      logs: [],
    });
  });

  it.each(["", "not json", "{", "{'kind':'returned'}", '{"kind":"returned",}', "undefined"])(
    "fails the non-JSON reply %j as invalid_result",
    (reply) => {
      const outcome = parseGuestReply("tool.call", reply, limits);
      expect(outcome).toMatchObject({
        type: "failed",
        failure: { code: "invalid_result", message: "The hook's reply is not JSON" },
      });
    },
  );

  it("fails a reply over maxReplyChars before parsing it, and parses one at the limit", () => {
    const max = maxReplyChars(limits);
    const padding = (n: number) => " ".repeat(n - returned(null).length);
    const atLimit = returned(null) + padding(max);
    expect(atLimit.length).toBe(max);
    expect(parseGuestReply("tool.call", atLimit, limits).type).toBe("decided");

    const over = `${atLimit} `;
    expect(parseGuestReply("tool.call", over, limits)).toEqual({
      type: "failed",
      failure: {
        code: "result_too_large",
        message: `The hook's reply is ${max + 1} characters, over the ${max} limit`,
      },
      logs: [],
    });
    // Not even valid JSON: proves the size check comes first.
    expect(parseGuestReply("tool.call", "x".repeat(max + 1), limits)).toMatchObject({
      failure: { code: "result_too_large" },
    });
  });

  it("scales the reply cap with the limits", () => {
    const small = { ...limits, maxResultChars: 256, maxStateChars: 2, maxLogChars: 0 };
    expect(maxReplyChars(small)).toBe(256 + 2 + 0 + 1_024);
    expect(parseGuestReply("tool.call", returned("x".repeat(2_000)), small)).toMatchObject({
      failure: { code: "result_too_large" },
    });
  });

  it.each([
    ["a missing kind", { result: null, logs: [] }],
    ["an unknown kind", { kind: "crashed", logs: [] }],
    ["missing logs", { kind: "returned", result: null }],
    ["logs that are not strings", { kind: "returned", result: null, logs: [1] }],
    ["an extra key", { kind: "returned", result: null, logs: [], host: "pwn" }],
    ["a __proto__ key", JSON.parse('{"kind":"returned","result":null,"logs":[],"__proto__":{"polluted":true}}')],
    ["a state that is not an object", { kind: "returned", result: null, logs: [], state: [1] }],
    ["a host-only failure code", { kind: "failed", code: "sandbox_crashed", message: "x", logs: [] }],
    ["an oversize failure message", { kind: "failed", code: "threw", message: "m".repeat(4_097), logs: [] }],
    ["an array", [{ kind: "returned", result: null, logs: [] }]],
    ["a number", 1],
  ])("fails a malformed envelope (%s) as invalid_result and keeps the issues", (_, envelope) => {
    const outcome = parseGuestReply("tool.call", JSON.stringify(envelope), limits);
    expect(outcome.type).toBe("failed");
    if (outcome.type !== "failed") return;
    expect(outcome.failure.code).toBe("invalid_result");
    expect(outcome.failure.message).toBe("The hook's reply envelope is malformed");
    expect(outcome.failure.issues?.length).toBeGreaterThan(0);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each(["threw", "pending", "result_too_large", "invalid_result"] as const)(
    "passes a failed envelope with code %s through with its message and logs",
    (code) => {
      const reply = JSON.stringify({ kind: "failed", code, message: "Error: boom", logs: ["before"] });
      expect(parseGuestReply("turn.end", reply, limits)).toEqual({
        type: "failed",
        failure: { code, message: "Error: boom" },
        logs: ["before"],
      });
    },
  );

  it("fails a result the point does not accept as invalid_result, keeping issues with paths and logs", () => {
    const outcome = parseGuestReply("tool.call", returned({ type: "block", reson: "typo" }, { logs: ["l"] }), limits);
    expect(outcome).toMatchObject({
      type: "failed",
      failure: { code: "invalid_result", message: "The hook returned a result that tool.call does not accept" },
      logs: ["l"],
    });
    if (outcome.type !== "failed") return;
    expect(outcome.failure.issues).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: expect.any(Array) })]),
    );
  });

  it("keeps at most 20 issues", () => {
    const input = Array.from({ length: 50 }, () => ({ role: "robot", content: 1 }));
    const outcome = parseGuestReply("run.start", returned({ type: "rewrite", input }), limits);
    expect(outcome.type === "failed" && outcome.failure.issues?.length).toBe(20);
  });

  it("rejects a result for the wrong point and anything at run.end", () => {
    expect(parseGuestReply("tool.result", returned({ type: "block", reason: "x" }), limits).type).toBe("failed");
    expect(parseGuestReply("run.end", returned({ type: "stop", reason: "x" }), limits).type).toBe("failed");
  });

  it("never throws on deeply nested JSON in the result or the state", () => {
    const deep = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
    for (const depth of [5_000, 40_000]) {
      const inResult = `{"kind":"returned","result":{"type":"rewrite","args":{"a":${deep(depth)}}},"logs":[]}`;
      const inState = `{"kind":"returned","result":null,"state":{"a":${deep(depth)}},"logs":[]}`;
      for (const reply of [inResult, inState]) {
        expect(reply.length).toBeLessThan(maxReplyChars(limits));
        expect(parseGuestReply("tool.call", reply, limits)).toMatchObject({
          type: "failed",
          failure: { code: "invalid_result" },
        });
      }
    }
  });
});
