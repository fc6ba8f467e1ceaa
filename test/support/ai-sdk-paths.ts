import { generateText, stepCountIs, streamText, type ToolSet, tool } from "ai";
import { guardAiSdk } from "../../src/adapters/ai-sdk/index.js";
import { scriptedLanguageModel } from "./ai-sdk-script.js";
import type { DecisionPath, Scenario } from "./decision-paths.js";

/** The AI SDK's `generateText` and `streamText` as rows of the decision comparison. */

export function aiSdkTools(scenario: Scenario): ToolSet {
  const tools: ToolSet = {};
  for (const t of scenario.tools)
    tools[t.name] = tool({
      description: t.description,
      inputSchema: t.parameters,
      execute: async (args: Record<string, unknown>) => t.run(args),
    });
  return tools;
}

function aiSdkPath(name: string, mode: "generate" | "stream"): DecisionPath {
  return {
    name,
    async drive(runtime, tenantId, scenario, onEvent) {
      const run = await runtime.openRun({ tenantId, onEvent });
      const guard = guardAiSdk(run);
      const options = {
        model: guard.model(scriptedLanguageModel(scenario.turns)),
        tools: guard.tools(aiSdkTools(scenario)),
        prepareStep: guard.prepareStep,
        onStepFinish: guard.onStepFinish,
        stopWhen: [guard.stopWhen, stepCountIs(20)],
        prompt: scenario.input,
      };
      if (mode === "generate") await generateText(options);
      else await streamText(options).consumeStream({ onError: (error) => Promise.reject(error) });
      await guard.end();
    },
  };
}

export const aiSdkGenerateText = aiSdkPath("AI SDK generateText", "generate");
export const aiSdkStreamText = aiSdkPath("AI SDK streamText", "stream");
