import type { z } from "zod";
import { defineTool, type Model, type ScriptedTurnInput, scriptedModel } from "../../src/agent/index.js";
import { openAIModel } from "../../src/index.js";
import type { HookRuntime, RunEvent } from "../../src/runtime/index.js";
import { startChatCompletionsServer } from "./chat-completions-server.js";

/**
 * The comparison of paths into one tenant's hooks: the same scenario (scripted model turns and tools)
 * driven through isohook's own loop and through each framework adapter must yield the same decisions. A
 * path is one row: its name and how it runs a scenario, reporting the run's events.
 */

export interface ScenarioTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: z.ZodObject;
  /** The tool's output for the args it runs with. */
  run(args: Record<string, unknown>): string;
}

export interface Scenario {
  readonly input: string;
  readonly turns: readonly ScriptedTurnInput[];
  readonly tools: readonly ScenarioTool[];
}

export interface DecisionPath {
  readonly name: string;
  /** Runs the scenario for the tenant, passing every run event to `onEvent`. */
  drive(runtime: HookRuntime, tenantId: string, scenario: Scenario, onEvent: (event: RunEvent) => void): Promise<void>;
}

/** One `hooks.decided` as compared: point, decision type, and the hooks whose calls decided. */
export function decidedLine(event: RunEvent): string | undefined {
  if (event.type !== "hooks.decided") return undefined;
  const hooks = event.records.filter((r) => r.outcome.type !== "skipped").map((r) => r.hookId);
  return `${event.point} ${event.decision.type} ${hooks.join(",")}`;
}

/** The `hooks.decided` sequence of one path on one scenario. */
export async function decisionsOf(
  path: DecisionPath,
  runtime: HookRuntime,
  tenantId: string,
  scenario: Scenario,
): Promise<string[]> {
  const lines: string[] = [];
  await path.drive(runtime, tenantId, scenario, (event) => {
    const line = decidedLine(event);
    if (line !== undefined) lines.push(line);
  });
  return lines;
}

/** isohook's own loop on a model made for the scenario (and closed after it). */
function isohookLoopOn(
  name: string,
  source: (scenario: Scenario) => Promise<{ readonly model: Model; close(): Promise<void> }>,
): DecisionPath {
  return {
    name,
    async drive(runtime, tenantId, scenario, onEvent) {
      const tools = scenario.tools.map((t) =>
        defineTool({
          name: t.name,
          description: t.description,
          parameters: t.parameters,
          execute: async (args) => t.run(args),
        }),
      );
      const { model, close } = await source(scenario);
      try {
        // Parallel: every call of a batch is decided before any runs, as frameworks that run a step's tools
        // concurrently (the AI SDK) do.
        await runtime.runAgent({ tenantId, input: scenario.input, tools, model, parallelToolCalls: true, onEvent });
      } finally {
        await close();
      }
    },
  };
}

export const isohookLoop = isohookLoopOn("isohook loop (runtime.runAgent, parallel tool calls)", async (scenario) => ({
  model: scriptedModel(scenario.turns),
  close: async () => {},
}));

export const isohookLoopOpenAI = isohookLoopOn(
  "isohook loop with openAIModel (@ai-sdk/openai-compatible, local server, SSE)",
  async (scenario) => {
    const server = await startChatCompletionsServer(scenario.turns);
    return { model: openAIModel({ baseUrl: server.baseURL, model: "scripted", env: {} }), close: () => server.close() };
  },
);
