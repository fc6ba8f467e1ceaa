import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, parseGuestReply } from "../../src/protocol/index.js";
import { isJsonValue, MAX_JSON_DEPTH } from "../../src/protocol/json.js";

const nested = (depth: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};

describe("isJsonValue", () => {
  it("accepts JSON values and plain objects", () => {
    expect(isJsonValue({ a: [1, "x", null, true, { b: -0.5 }] })).toBe(true);
    expect(isJsonValue(Object.create(null))).toBe(true);
    expect(isJsonValue(nested(MAX_JSON_DEPTH))).toBe(true);
  });

  it.each([
    ["a function", { f: () => 1 }],
    ["NaN", [Number.NaN]],
    ["Infinity", { x: Number.POSITIVE_INFINITY }],
    ["undefined", { x: undefined }],
    ["a BigInt", [1n]],
    ["a symbol", [Symbol.iterator]],
    ["a class instance", { d: new Date(0) }],
    ["a Map", new Map()],
    ["nesting past the depth cap", nested(MAX_JSON_DEPTH + 1)],
  ])("rejects %s", (_, value) => {
    expect(isJsonValue(value)).toBe(false);
  });
});

describe("parseGuestReply on prototype keys and depth", () => {
  it("drops __proto__ keys inside args and state, also when the key is spelled with escapes", () => {
    const reply =
      '{"kind":"returned","result":{"type":"rewrite","args":{"a":1,"\\u005f_proto__":{"polluted":true}}},' +
      '"state":{"n":1,"__proto__":{"admin":true}},"logs":[]}';
    const outcome = parseGuestReply("tool.call", reply, DEFAULT_LIMITS);
    expect(outcome).toEqual({
      type: "decided",
      result: { type: "rewrite", args: { a: 1 } },
      state: { n: 1 },
      logs: [],
    });
    if (outcome.type !== "decided" || outcome.result?.type !== "rewrite") throw new Error("expected a rewrite");
    expect(Object.hasOwn(outcome.result.args, "__proto__")).toBe(false);
    expect(Object.hasOwn(outcome.state ?? {}, "__proto__")).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("fails args nested past the depth cap as invalid_result", () => {
    const reply = JSON.stringify({
      kind: "returned",
      result: { type: "rewrite", args: { deep: nested(MAX_JSON_DEPTH + 5) } },
      logs: [],
    });
    const outcome = parseGuestReply("tool.call", reply, DEFAULT_LIMITS);
    expect(outcome.type === "failed" && outcome.failure.code).toBe("invalid_result");
  });
});
