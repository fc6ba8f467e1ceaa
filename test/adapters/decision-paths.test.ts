import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import type { HookExecutor } from "../../src/protocol/index.js";
import { TenantId } from "../../src/protocol/index.js";
import { createHookRuntime, type HookRuntime } from "../../src/runtime/index.js";
import { MemoryBundleStore } from "../../src/store/index.js";
import { aiSdkGenerateText, aiSdkStreamText } from "../support/ai-sdk-paths.js";
import { type DecisionPath, decisionsOf, isohookLoop, type Scenario } from "../support/decision-paths.js";

/**
 * One hook bundle, one scripted conversation, every path into the hooks: the same decisions, point by
 * point, with the same deciding hook. A new adapter joins by adding its row to PATHS.
 */

const PATHS: readonly DecisionPath[] = [isohookLoop, aiSdkGenerateText, aiSdkStreamText];

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
let executor: HookExecutor;
let runtime: HookRuntime;

beforeAll(async () => {
  executor = await createHookExecutor({ workers: 1, spareWorker: false, limits: { timeoutMs: 2_000 } });
  const store = new MemoryBundleStore();
  const built = await buildBundle("test/fixtures/frameworks/index.ts", { executor });
  await store.upload({ tenantId: TenantId.parse(tenantId), ...built, by: "test", activate: true });
  runtime = await createHookRuntime({ executor, store, decisionLog: false });
});
afterAll(async () => {
  await runtime?.close();
  await executor?.close();
});

describe("one bundle, one conversation, every path", () => {
  it("the isohook loop decides the scenario as the bundle says", async () => {
    const lines = await decisionsOf(isohookLoop, runtime, tenantId, SCENARIO);
    const hook = "tenant:acme@v1";
    expect(lines).toEqual([
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
      const expected = await decisionsOf(isohookLoop, runtime, tenantId, SCENARIO);
      expect(await decisionsOf(path, runtime, tenantId, SCENARIO)).toEqual(expected);
    });
});
