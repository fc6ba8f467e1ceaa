import type { z } from "zod";
import { defineTool, type Model, type ScriptedTurnInput, scriptedModel } from "../../src/agent/index.js";
import { openAIModel } from "../../src/index.js";
import type { HookPoint } from "../../src/protocol/index.js";
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
  /** The points its host reaches, when not all of them (an MCP gateway sees no model). */
  readonly reaches?: readonly HookPoint[];
  /** Whether a batch's calls are all decided before any runs (parallel) or each runs before the next. */
  readonly toolCalls: "parallel" | "sequential";
  /** Runs the scenario for the tenant, passing every run event to `onEvent`. */
  drive(runtime: HookRuntime, tenantId: string, scenario: Scenario, onEvent: (event: RunEvent) => void): Promise<void>;
}

/** One `hooks.decided` as compared: point, decision type, and the hooks whose calls decided. */
export function decidedLine(event: RunEvent): string | undefined {
  if (event.type !== "hooks.decided") return undefined;
  const hooks = event.records.filter((r) => r.outcome.type !== "skipped").map((r) => r.hookId);
  return `${event.point} ${event.decision.type} ${hooks.join(",")}`;
}

/** The `hooks.decided` sequence of one path on one scenario, at the points `reaches` (default: all). */
export async function decisionsOf(
  path: DecisionPath,
  runtime: HookRuntime,
  tenantId: string,
  scenario: Scenario,
  reaches?: readonly HookPoint[],
): Promise<string[]> {
  const lines: string[] = [];
  await path.drive(runtime, tenantId, scenario, (event) => {
    const line = decidedLine(event);
    if (line === undefined) return;
    if (event.type === "hooks.decided" && reaches !== undefined && !reaches.includes(event.point)) return;
    lines.push(line);
  });
  return lines;
}

/** Where a loop path's model comes from: made for the scenario, and closed after it. */
type ModelSource = (scenario: Scenario) => Promise<{ readonly model: Model; close(): Promise<void> }>;

const scripted: ModelSource = async (scenario) => ({ model: scriptedModel(scenario.turns), close: async () => {} });

/** isohook's own loop on a model from `source`; the reference every other path is compared with. */
export function loopPath(toolCalls: DecisionPath["toolCalls"], source = scripted, name?: string): DecisionPath {
  return {
    name: name ?? `isohook loop (runtime.runAgent, ${toolCalls} tool calls)`,
    toolCalls,
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
        const parallelToolCalls = toolCalls === "parallel";
        await runtime.runAgent({ tenantId, input: scenario.input, tools, model, parallelToolCalls, onEvent });
      } finally {
        await close();
      }
    },
  };
}

export const isohookLoop = loopPath("parallel");

export const isohookLoopOpenAI = loopPath(
  "parallel",
  async (scenario) => {
    const server = await startChatCompletionsServer(scenario.turns);
    return { model: openAIModel({ baseUrl: server.baseURL, model: "scripted", env: {} }), close: () => server.close() };
  },
  "isohook loop with openAIModel (@ai-sdk/openai-compatible, local server, SSE)",
);
