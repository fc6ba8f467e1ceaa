import { describe, expect, it } from "vitest";
import { HOOK_POINT_NAMES, HOOK_POINTS, type HookPoint } from "../../src/protocol/index.js";
import { call, RESULTS, user } from "./samples.js";

const REASON_MAX = 2_000;
/** Own keys as JSON.parse makes them from guest output: `__proto__` is a plain key there. */
const HOSTILE_KEYS: Record<string, unknown>[] = [
  JSON.parse('{"__proto__": {"type": "stop"}}'),
  JSON.parse('{"then": "x"}'),
];
const TEXT_MAX = 60_000;

/** Results valid at some point but not at this one: each hook point's own vocabulary only. */
function foreignResults(point: HookPoint): Record<string, unknown>[] {
  const own = new Set(RESULTS[point].map((r) => r.type));
  return HOOK_POINT_NAMES.flatMap((p) => RESULTS[p]).filter((r) => !own.has(r.type));
}

describe.each(HOOK_POINT_NAMES)("%s result schema", (point) => {
  const schema = HOOK_POINTS[point].result;

  it.each(RESULTS[point].map((r) => [JSON.stringify(r), r]))("accepts %s", (_, result) => {
    expect(schema.safeParse(result).success).toBe(true);
  });

  it("rejects results of other hook points", () => {
    const accepted = foreignResults(point).filter((r) => schema.safeParse(r).success);
    expect(accepted).toEqual([]);
  });

  it("rejects an unknown type, a missing type and non-objects", () => {
    for (const wrong of [
      { type: "nope" },
      { type: "Block", reason: "x" },
      {},
      null,
      "block",
      1,
      true,
      [],
      [{ type: "stop", reason: "x" }],
    ]) {
      expect(schema.safeParse(wrong).success, JSON.stringify(wrong)).toBe(false);
    }
  });

  it("rejects an extra key on every result", () => {
    for (const result of RESULTS[point]) {
      for (const extra of [{ reson: "typo" }, { constructor: 1 }, ...HOSTILE_KEYS]) {
        expect(schema.safeParse({ ...result, ...extra }).success, JSON.stringify({ ...result, ...extra })).toBe(false);
      }
    }
  });
});

describe("result schemas", () => {
  it("treat run.end as observe-only", () => {
    for (const anything of [{ type: "stop", reason: "x" }, {}, null, undefined, "x"]) {
      expect(HOOK_POINTS["run.end"].result.safeParse(anything).success).toBe(false);
    }
  });

  it.each([
    [
      "tool.call",
      { type: "block", reason: "r".repeat(REASON_MAX) },
      { type: "block", reason: "r".repeat(REASON_MAX + 1) },
    ],
    [
      "tool.call",
      { type: "stop", reason: "r".repeat(REASON_MAX) },
      { type: "stop", reason: "r".repeat(REASON_MAX + 1) },
    ],
    ["input.inbound", { type: "drop", reason: "r" }, { type: "drop", reason: "r".repeat(REASON_MAX + 1) }],
    ["tool.invalid", { type: "skip", reason: "r" }, { type: "skip", reason: "r".repeat(REASON_MAX + 1) }],
    ["output.validate", { type: "fail", reason: "r" }, { type: "fail", reason: "r".repeat(REASON_MAX + 1) }],
    ["turn.end", { type: "end", reason: "r" }, { type: "end", reason: "r".repeat(REASON_MAX + 1) }],
    [
      "tool.result",
      { type: "patch", content: "c".repeat(TEXT_MAX) },
      { type: "patch", content: "c".repeat(TEXT_MAX + 1) },
    ],
    [
      "model.request",
      { type: "patch", system: "s".repeat(TEXT_MAX) },
      { type: "patch", system: "s".repeat(TEXT_MAX + 1) },
    ],
    ["model.request", { type: "patch", model: "m".repeat(128) }, { type: "patch", model: "m".repeat(129) }],
    ["model.response", { type: "retry", feedback: "f" }, { type: "retry", feedback: "f".repeat(TEXT_MAX + 1) }],
    ["turn.end", { type: "continue", message: "m" }, { type: "continue", message: "m".repeat(TEXT_MAX + 1) }],
    [
      "input.inbound",
      { type: "rewrite", message: { role: "user", content: "u".repeat(TEXT_MAX) } },
      { type: "rewrite", message: { role: "user", content: "u".repeat(TEXT_MAX + 1) } },
    ],
    ["tools.prepare", { type: "restrict", allow: ["t".repeat(128)] }, { type: "restrict", allow: ["t".repeat(129)] }],
  ] as const)("%s caps string sizes: %#", (point, atLimit, overLimit) => {
    const schema = HOOK_POINTS[point].result;
    expect(schema.safeParse(atLimit).success).toBe(true);
    expect(schema.safeParse(overLimit).success).toBe(false);
  });

  it.each([
    ["tool.call", { type: "block", reason: "" }],
    ["tool.call", { type: "block" }],
    ["tool.call", { type: "block", reason: 1 }],
    ["tool.call", { type: "block", reason: "r", terminate: "yes" }],
    ["tool.call", { type: "rewrite", args: ["ls"] }],
    ["tool.call", { type: "rewrite", args: "ls" }],
    ["tool.call", { type: "rewrite", args: { n: Number.NaN } }],
    ["tool.call", { type: "stop" }],
    ["run.start", { type: "rewrite", input: [{ role: "robot", content: "x" }] }],
    ["run.start", { type: "rewrite", input: [{ role: "user", content: "x", extra: 1 }] }],
    ["input.inbound", { type: "rewrite", message: "hi" }],
    ["context.prepare", { type: "replace", messages: user }],
    ["tools.prepare", { type: "restrict", allow: ["has space"] }],
    ["tools.prepare", { type: "restrict", allow: [""] }],
    ["tools.prepare", { type: "restrict", allow: "read" }],
    ["model.request", { type: "patch", temperature: 3 }],
    ["model.request", { type: "patch", maxTokens: 0 }],
    ["model.request", { type: "patch", maxTokens: 1.5 }],
    ["model.request", { type: "patch", toolChoice: "any" }],
    ["model.request", { type: "patch", toolChoice: { name: "read", extra: true } }],
    ["model.request", { type: "patch", model: "" }],
    ["model.request", { type: "respond", message: user }],
    [
      "model.response",
      { type: "replace", message: { role: "assistant", content: "x", toolCalls: [{ ...call, id: "" }] } },
    ],
    ["model.response", { type: "retry", feedback: 1 }],
    ["tool.invalid", { type: "retry" }],
    ["tool.invalid", { type: "repair" }],
    ["tool.invalid", { type: "repair", name: "read", args: [] }],
    ["tool.result", { type: "patch", isError: "no" }],
    ["tool.result", { type: "patch", content: 42 }],
    ["turn.end", { type: "continue", message: null }],
    ["output.validate", { type: "retry" }],
    ["output.validate", { type: "fail" }],
  ] as const)("%s rejects the wrong shape %j", (point, result) => {
    expect(HOOK_POINTS[point].result.safeParse(result).success).toBe(false);
  });
});
