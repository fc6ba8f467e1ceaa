import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FailureCode, JsonObject, type SandboxResult, ToolResult } from "../../src/protocol/index.js";
import { returned, toolCallEvent } from "./helpers.js";
import { setup } from "./setup.js";

/** Guest outputs: plausible results with random fields, arbitrary JSON, and arbitrary strings. */
const resultLike = fc.record(
  {
    type: fc.constantFrom("rewrite", "block", "stop", "patch", "retry", "nope"),
    args: fc.jsonValue(),
    reason: fc.oneof(fc.string(), fc.jsonValue()),
    terminate: fc.jsonValue(),
    content: fc.oneof(fc.string(), fc.jsonValue()),
    isError: fc.jsonValue(),
    details: fc.jsonValue(),
  },
  { requiredKeys: ["type"] },
);
const reply: fc.Arbitrary<SandboxResult> = fc.oneof(
  resultLike.map((r) => returned(r)),
  fc.jsonValue().map((r) => returned(r)),
  fc.string().map((s) => ({ type: "replied" as const, reply: s, cpuMs: 0, runMs: 0 })),
  fc.record({ state: fc.jsonValue() }).map(({ state }) => returned(undefined, { state })),
);

describe("dispatcher properties", () => {
  it("never rejects and never lets an invalid tool.call decision through", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(reply, { minLength: 1, maxLength: 4 }), fc.boolean(), async (replies, open) => {
        let i = 0;
        const { run } = setup({
          points: ["tool.call"],
          policy: open ? { "tool.call": "open" } : {},
          respond: () => replies[i++ % replies.length] ?? returned(undefined),
        });
        for (let n = 0; n < replies.length; n++) {
          const { decision, records } = await run.dispatch("tool.call", toolCallEvent());
          switch (decision.type) {
            case "execute":
              expect(JsonObject.safeParse(decision.args).success).toBe(true);
              break;
            case "block":
            case "ask":
            case "stop":
              expect(decision.reason.length).toBeGreaterThan(0);
              break;
            default: {
              const never: never = decision;
              throw new Error(`unexpected ${String(never)}`);
            }
          }
          const outcome = records[0]?.outcome;
          if (outcome?.type === "failed") {
            expect(FailureCode.safeParse(outcome.failure.code).success).toBe(true);
            if (!open) expect(decision).toMatchObject({ type: "block", reason: outcome.failure.code });
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it("always yields a valid tool result from tool.result patches", async () => {
    await fc.assert(
      fc.asyncProperty(reply, async (outcome) => {
        const { run } = setup({ points: ["tool.result"], respond: () => outcome });
        const { decision } = await run.dispatch("tool.result", {
          call: { id: "c", name: "t", args: {} },
          executed: true,
          result: { content: "ok", isError: false },
        });
        if (decision.type === "result") expect(ToolResult.safeParse(decision.result).success).toBe(true);
        else expect(decision.type).toBe("stop");
      }),
      { numRuns: 200 },
    );
  });
});
