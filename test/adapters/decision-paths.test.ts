import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { HookRuntime } from "../../src/runtime/index.js";
import {
  aiSdkGenerateText,
  aiSdkStreamText,
  openAiCompatibleGenerateText,
  openAiCompatibleStreamText,
} from "../support/ai-sdk-paths.js";
import {
  type DecisionPath,
  decisionsOf,
  isohookLoop,
  isohookLoopOpenAI,
  loopPath,
  type Scenario,
} from "../support/decision-paths.js";
import { frameworkRuntime } from "../support/framework-runtime.js";
import { mcpGateway } from "../support/mcp-path.js";

/**
 * One hook bundle, one scripted conversation, every path into the hooks: the same decisions, point by
 * point, with the same deciding hook. A new adapter joins by adding its row to PATHS; a path that reaches
 * only some points (an MCP gateway sees no model) is compared with the loop at those points, and a path
 * that runs each tool call before deciding the next with the loop's sequential tool calls.
 */

const PATHS: readonly DecisionPath[] = [
  isohookLoop,
  isohookLoopOpenAI,
  aiSdkGenerateText,
  aiSdkStreamText,
  openAiCompatibleGenerateText,
  openAiCompatibleStreamText,
  mcpGateway,
];

const SCENARIO: Scenario = {
  input: "Tidy the workspace",
  tools: [
    {
      name: "shell",
      description: "Runs a shell command",
      parameters: z.object({ command: z.string(), cwd: z.string().optional() }),
      run: (args) => `ran ${String(args.command)} in ${String(args.cwd)}; token sk-abcdefgh1234`,
    },
    {
      name: "write",
      description: "Writes a file",
      parameters: z.object({ path: z.string() }),
      run: (args) => `wrote ${String(args.path)}`,
    },
    { name: "deploy", description: "Deploys", parameters: z.object({}), run: () => "deployed" },
  ],
  turns: [
    {
      text: "Cleaning up",
      toolCalls: [
        { name: "shell", args: { command: "rm -rf /" } },
        { name: "shell", args: { command: "ls" } },
      ],
    },
    { text: "the PASSWORD is hunter2", toolCalls: [{ name: "write", args: { path: "notes.md" } }] },
    { text: "All DONE" },
  ],
};

const tenantId = "acme";
let runtime: HookRuntime;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ runtime, close } = await frameworkRuntime());
});
afterAll(() => close?.());

describe("one bundle, one conversation, every path", () => {
  it("the isohook loop decides the scenario as the bundle says", async () => {
    const lines = await decisionsOf(isohookLoop, runtime, tenantId, SCENARIO);
    const hook = "tenant:acme@v1";
    expect(lines).toEqual([
      `input.inbound deliver ${hook}`,
      `tools.prepare tools ${hook}`,
      `model.request request ${hook}`,
      `model.response accept ${hook}`,
      `tool.call block ${hook}`,
      `tool.call execute ${hook}`,
      `tool.result result ${hook}`,
      `tool.result result ${hook}`,
      `turn.end default ${hook}`,
      `tools.prepare tools ${hook}`,
      `model.request request ${hook}`,
      `model.response accept ${hook}`,
      `tool.call execute ${hook}`,
      `tool.result result ${hook}`,
      `turn.end default ${hook}`,
      `tools.prepare tools ${hook}`,
      `model.request request ${hook}`,
      `model.response accept ${hook}`,
      `turn.end end ${hook}`,
    ]);
  });

  for (const path of PATHS.slice(1))
    it(`${path.name} yields the isohook loop's decisions`, async () => {
      const reference = loopPath(path.toolCalls);
      const expected = await decisionsOf(reference, runtime, tenantId, SCENARIO, path.reaches);
      expect(expected.length).toBeGreaterThan(0);
      expect(await decisionsOf(path, runtime, tenantId, SCENARIO, path.reaches)).toEqual(expected);
    });
});
