import { z } from "zod";
import { defineTool, scriptedModel } from "../../../src/agent/index.js";
import type { HookRuntime, RunAgentResult } from "../../../src/runtime/index.js";

/**
 * One agent run for acme that asks a `shell` tool to `rm -rf /`: a blocking hook keeps the command out
 * of `ran`, any other lets it in. What the runtime pick-up tests run on each bundle version.
 */
export function destructiveRun(runtime: HookRuntime, ran: string[]): Promise<RunAgentResult> {
  const shell = defineTool({
    name: "shell",
    description: "Runs a shell command",
    parameters: z.object({ command: z.string() }),
    execute: async ({ command }) => {
      ran.push(command);
      return `ran ${command}`;
    },
  });
  return runtime.runAgent({
    tenantId: "acme",
    input: "clean up",
    tools: [shell],
    model: scriptedModel([{ toolCalls: [{ name: "shell", args: { command: "rm -rf /" } }] }, { text: "done" }]),
  });
}
