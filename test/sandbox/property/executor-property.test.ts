import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createInlineExecutor } from "../../../sandbox/worker/index.js";
import { invokeHook } from "../../../src/dispatch/invoke-hook.js";
import {
  FailureCode,
  HOOK_POINT_NAMES,
  HOOK_POINTS,
  type HookOutcome,
  type HookPoint,
  handlerOf,
  JsonObject,
  Limits,
} from "../../../src/protocol/index.js";
import { hookCall, hooksBundle, scriptBundle, tenant } from "../bundle-fixtures.js";

const LIMITS_INPUT = { timeoutMs: 2_000, memoryMb: 16, maxResultChars: 2_048, maxStateChars: 512, maxLogLines: 4 };
const limits = Limits.parse(LIMITS_INPUT);
// A small isolate budget: every run is a new bundle, so the pool keeps evicting as it goes.
const executor = createInlineExecutor({ limits: LIMITS_INPUT, pool: { maxIsolates: 8 }, quiet: true });
afterAll(() => executor.close());

const RUNS = { numRuns: 60 };
const point = fc.constantFrom(...HOOK_POINT_NAMES);

/** Every outcome must be one the protocol allows; returns it for further checks. */
function assertValidOutcome<P extends HookPoint>(p: P, outcome: HookOutcome<P>): HookOutcome<P> {
  expect(outcome.logs.every((line) => typeof line === "string")).toBe(true);
  expect(outcome.logs.length).toBeLessThanOrEqual(limits.maxLogLines + 1);
  if (outcome.type === "failed") {
    expect(FailureCode.safeParse(outcome.failure.code).success).toBe(true);
    expect(typeof outcome.failure.message).toBe("string");
    return outcome;
  }
  if (outcome.result !== null) expect(HOOK_POINTS[p].result.safeParse(outcome.result).success).toBe(true);
  if (outcome.state !== undefined) expect(JsonObject.safeParse(outcome.state).success).toBe(true);
  return outcome;
}

/** Objects shaped like results of some point, often valid for one of them, sometimes too large. */
const resultLike = fc.record(
  {
    type: fc.constantFrom("block", "rewrite", "stop", "restrict", "continue", "end", "accept", "retry", "fail"),
    reason: fc.oneof(fc.string(), fc.string({ minLength: 2_100, maxLength: 2_200 })),
    args: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })),
    allow: fc.array(fc.string()),
    feedback: fc.string(),
  },
  { requiredKeys: ["type"] },
);

/** Results valid at some points (stop at most), with arbitrary text. */
const validish = fc.oneof(
  fc.string().map((reason) => ({ type: "stop", reason })),
  fc.string().map((reason) => ({ type: "block", reason })),
  fc.array(fc.string(), { maxLength: 3 }).map((allow) => ({ type: "restrict", allow })),
  fc.constantFrom({ type: "accept" }, { type: "end" }, { type: "continue" }, { type: "fail" }),
);

/** JS source of a value: plain JSON, or the shapes JSON cannot carry (cycles, getters, symbols, …). */
const hostileSource: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
    fc.constantFrom(
      "undefined",
      "NaN",
      "-0",
      "Infinity",
      "10n",
      "Symbol('s')",
      "() => 1",
      "new Map([[1, 2]])",
      "new Date(0)",
      "/re/g",
      "new Uint8Array(3)",
      "(() => { const o = { type: 'block' }; o.self = o; return o; })()",
      "({ get reason() { throw new Error('getter'); }, type: 'block' })",
      "({ toJSON() { return { type: 'block', reason: 'via toJSON' }; } })",
      "({ then(resolve) { resolve({ type: 'block', reason: 'thenable' }); } })",
      "new Proxy({}, { ownKeys() { throw new Error('trap'); } })",
      'JSON.parse(\'{"__proto__": {"type": "block"}, "constructor": 1}\')',
      "'x'.repeat(5000)",
    ),
    fc
      .record({ type: fc.constantFrom("block", "rewrite", "stop", "patch", "restrict", "continue", "end", "accept") })
      .map((r) => JSON.stringify(r)),
    fc.array(tie("value"), { maxLength: 3 }).map((items) => `[${items.join(", ")}]`),
    fc
      .array(
        fc.tuple(fc.constantFrom("type", "reason", "args", "toJSON", "__proto__", "constructor", "x"), tie("value")),
        {
          maxLength: 3,
        },
      )
      .map((entries) => `({ ${entries.map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(", ")} })`),
    tie("value").map((v) => `Promise.resolve(${v})`),
    tie("value").map((v) => `Promise.reject(${v})`),
    tie("value").map((v) => `(async () => { await null; return ${v}; })()`),
  ),
})).value;

describe("inline executor properties", () => {
  it("returns a valid outcome for any JSON event at any point, and never rejects", async () => {
    const echo = hooksBundle(
      `{ ${HOOK_POINT_NAMES.map((p) => `${handlerOf(p)}(event, ctx) { console.log(event); ctx.state.last = typeof event; }`).join(",\n")} }`,
    );
    await fc.assert(
      fc.asyncProperty(point, fc.jsonValue(), async (p, event) => {
        const { outcome } = await invokeHook(executor, ...hookCall(tenant("echo"), echo, { point: p, event }), limits);
        const valid = assertValidOutcome(p, outcome);
        expect(valid).toMatchObject({ type: "decided", result: null });
      }),
      RUNS,
    );
  });

  it("decides exactly the JSON results the point's schema accepts, and fails the rest with a code", async () => {
    await fc.assert(
      fc.asyncProperty(point, fc.oneof(fc.jsonValue({ maxDepth: 3 }), resultLike, validish), async (p, value) => {
        const bundle = hooksBundle(`{ ${handlerOf(p)}() { return ${JSON.stringify(value)}; } }`);
        const { outcome } = await invokeHook(executor, ...hookCall(tenant("model"), bundle, { point: p }), limits);
        assertValidOutcome(p, outcome);
        const tooLarge = JSON.stringify(value).length > limits.maxResultChars;
        const accepted = value === null || HOOK_POINTS[p].result.safeParse(value).success;
        if (tooLarge) expect(outcome).toMatchObject({ type: "failed", failure: { code: "result_too_large" } });
        else if (accepted) expect(outcome.type).toBe("decided");
        else expect(outcome).toMatchObject({ type: "failed", failure: { code: "invalid_result" } });
      }),
      RUNS,
    );
  });

  it("turns any hostile return value into a valid outcome without rejecting", async () => {
    await fc.assert(
      fc.asyncProperty(point, hostileSource, async (p, source) => {
        const bundle = hooksBundle(`{ ${handlerOf(p)}(event, ctx) { ctx.state.v = ${source}; return ${source}; } }`);
        const executed = await executor.execute(...hookCall(tenant("hostile"), bundle, { point: p }));
        expect(["replied", "failed"]).toContain(executed.type);
        const { outcome } = await invokeHook(executor, ...hookCall(tenant("hostile"), bundle, { point: p }), limits);
        assertValidOutcome(p, outcome);
      }),
      RUNS,
    );
  });

  it("turns any bundle text into a valid outcome without rejecting", async () => {
    await fc.assert(
      fc.asyncProperty(point, fc.string({ maxLength: 200 }), async (p, code) => {
        const { outcome } = await invokeHook(
          executor,
          ...hookCall(tenant("garbage"), scriptBundle(code), { point: p }),
          limits,
        );
        assertValidOutcome(p, outcome);
        expect(outcome.type === "failed" ? outcome.failure.code : "decided").toMatch(/^(threw|decided|timeout)$/);
      }),
      { numRuns: 40 },
    );
  });
});
