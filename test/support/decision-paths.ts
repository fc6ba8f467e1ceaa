import type { z } from "zod";
import { defineTool, type ScriptedTurnInput, scriptedModel } from "../../src/agent/index.js";
import type { HookRuntime, RunEvent } from "../../src/runtime/index.js";

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

export const isohookLoop: DecisionPath = {
  name: "isohook loop (runtime.runAgent, parallel tool calls)",
  async drive(runtime, tenantId, scenario, onEvent) {
    const tools = scenario.tools.map((t) =>
      defineTool({
        name: t.name,
        description: t.description,
        parameters: t.parameters,
        execute: async (args) => t.run(args),
      }),
    );
    // Parallel: every call of a batch is decided before any runs, as frameworks that run a step's tools
    // concurrently (the AI SDK) do.
    const model = scriptedModel(scenario.turns);
    await runtime.runAgent({ tenantId, input: scenario.input, tools, model, parallelToolCalls: true, onEvent });
  },
};
