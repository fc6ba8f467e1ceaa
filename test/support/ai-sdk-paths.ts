import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, type ToolSet, tool } from "ai";
import { guardAiSdk } from "../../src/adapters/ai-sdk/index.js";
import { scriptedLanguageModel } from "./ai-sdk-script.js";
import { startChatCompletionsServer } from "./chat-completions-server.js";
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

/** Where a path's model comes from: the SDK's mock model, or a real provider package against a local server. */
type ModelSource = (scenario: Scenario) => Promise<{ model: LanguageModelV4; close(): Promise<void> }>;

const mockModel: ModelSource = async (scenario) => ({
  model: scriptedLanguageModel(scenario.turns),
  close: async () => {},
});

const openAiCompatible: ModelSource = async (scenario) => {
  const server = await startChatCompletionsServer(scenario.turns);
  const provider = createOpenAICompatible({ name: "local", baseURL: server.baseURL, includeUsage: true });
  return { model: provider.chatModel("scripted"), close: () => server.close() };
};

function aiSdkPath(name: string, mode: "generate" | "stream", source: ModelSource): DecisionPath {
  return {
    name,
    toolCalls: "parallel",
    async drive(runtime, tenantId, scenario, onEvent) {
      const { model, close } = await source(scenario);
      const run = await runtime.openRun({ tenantId, onEvent });
      const guard = guardAiSdk(run);
      const input = await guard.input(scenario.input);
      if ("refused" in input) throw new Error(`the prompt was refused: ${input.refused}`);
      const options = {
        model: guard.model(model),
        tools: guard.tools(aiSdkTools(scenario)),
        prepareStep: guard.prepareStep,
        onStepFinish: guard.onStepFinish,
        stopWhen: [guard.stopWhen, stepCountIs(20)],
        prompt: input.prompt,
      };
      try {
        if (mode === "generate") await generateText(options);
        else {
          let failure: unknown;
          await streamText({ ...options, onError: ({ error }) => (failure ??= error) }).consumeStream();
          if (failure !== undefined) throw failure;
        }
      } finally {
        await guard.end();
        await close();
      }
    },
  };
}

export const aiSdkGenerateText = aiSdkPath("AI SDK generateText (mock model)", "generate", mockModel);
export const aiSdkStreamText = aiSdkPath("AI SDK streamText (mock model)", "stream", mockModel);
export const openAiCompatibleGenerateText = aiSdkPath(
  "AI SDK generateText (@ai-sdk/openai-compatible, local server)",
  "generate",
  openAiCompatible,
);
export const openAiCompatibleStreamText = aiSdkPath(
  "AI SDK streamText (@ai-sdk/openai-compatible, local server, SSE)",
  "stream",
  openAiCompatible,
);
