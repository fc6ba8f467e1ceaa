import { generateText, stepCountIs, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { guardAiSdk } from "../../src/adapters/ai-sdk/index.js";
import { toolResultOf } from "../../src/adapters/ai-sdk/messages.js";
import type { HookRuntime, RunEvent } from "../../src/runtime/index.js";
import { scriptedLanguageModel } from "../support/ai-sdk-script.js";
import { frameworkRuntime } from "../support/framework-runtime.js";

/**
 * What a model or a tool hands the adapter is untrusted on its way to the tenant's hooks: oversized text,
 * names the protocol does not allow, outputs with no JSON form. Each reaches the hooks in a shape they
 * accept or is refused with a clear error; the app's run is never corrupted.
 */

let runtime: HookRuntime;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ runtime, close } = await frameworkRuntime());
});
afterAll(() => close?.());

async function guarded(events: RunEvent[]) {
  return guardAiSdk(await runtime.openRun({ tenantId: "acme", onEvent: (e) => events.push(e) }));
}

const decided = (events: RunEvent[], point: string) =>
  events.flatMap((e) => (e.type === "hooks.decided" && e.point === point ? [e] : []));

describe("isohook/ai-sdk against hostile model and tool output", () => {
  it("caps a 200 kB reply for the hooks and still hands the app the model's whole text", async () => {
    const events: RunEvent[] = [];
    const guard = await guarded(events);
    const huge = "x".repeat(200_000);
    const result = await generateText({ model: guard.model(scriptedLanguageModel([{ text: huge }])), prompt: "hi" });
    expect(result.text).toBe(huge);
    const [response] = decided(events, "model.response");
    expect(response?.decision.type).toBe("accept");
    expect(response?.records[0]?.outcome.type).toBe("decided");
    await guard.end();
  });

  it("caps a 1 MB tool output for tool.result; an output with no JSON form (BigInt, a cycle) is read as text", async () => {
    const events: RunEvent[] = [];
    const guard = await guarded(events);
    const big = tool({ description: "Dumps", inputSchema: z.object({}), execute: async () => "y".repeat(1_000_000) });
    const model = scriptedLanguageModel([{ toolCalls: [{ name: "big", args: {} }] }, { text: "ok" }]);
    const result = await generateText({
      model: guard.model(model),
      tools: guard.tools({ big }),
      stopWhen: stepCountIs(3),
      prompt: "x",
    });
    const [resultEvent] = decided(events, "tool.result");
    expect(resultEvent?.records[0]?.outcome.type).toBe("decided");
    expect(result.steps[0]?.toolResults[0]?.output).toHaveLength(1_000_000);
    await guard.end();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(toolResultOf(10n)).toEqual({ content: "10", isError: false });
    expect(toolResultOf(cyclic)).toEqual({ content: "[object Object]", isError: false });
  });

  it("refuses a tool whose name the protocol does not allow, naming the tool and the rule", async () => {
    const events: RunEvent[] = [];
    const guard = await guarded(events);
    const spaced = tool({ description: "A tool", inputSchema: z.object({}), execute: async () => "ran" });
    expect(() => guard.tools({ "two words": spaced })).toThrow(
      expect.objectContaining({ code: "invalid_options", message: expect.stringContaining("`two words`") }),
    );
    await guard.end();
  });
});
