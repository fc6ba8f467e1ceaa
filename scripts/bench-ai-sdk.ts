/**
 * The AI SDK adapter's overhead: a 20-step `generateText` run (19 steps with one `shell` call, then the
 * answer) on the SDK's mock model, bare and guarded by a tenant bundle on 3 points (`tool.call`,
 * `tool.result`, `turn.end`) through the process sandbox, per step. Runs alternate so the machine's load
 * falls on both alike; figures are medians.
 *
 *   node --no-node-snapshot --import tsx scripts/bench-ai-sdk.ts
 */
import { createHash } from "node:crypto";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { createHookExecutor } from "../sandbox/supervisor/index.js";
import { guardAiSdk } from "../src/adapters/ai-sdk/index.js";
import { type ActiveBundle, BundleHash, TenantId } from "../src/protocol/index.js";
import { createHookRuntime, fixedBundleSource, type HookRuntime } from "../src/runtime/index.js";

const STEPS = 20;
const RUNS = 21;
const TENANT = TenantId.parse("acme");
const CODE = `var __isohook_bundle = (() => ({ default: {
  toolCall(event) {
    if (event.call.args.cwd !== "/workspace") return { type: "rewrite", args: { ...event.call.args, cwd: "/workspace" } };
  },
  toolResult(event) {
    if (/sk-[A-Za-z0-9]{8,}/.test(String(event.result.content))) return { type: "patch", content: "[REDACTED]" };
  },
  turnEnd(event) {
    if (event.message.content.includes("STOP")) return { type: "end" };
  },
} }))();`;
const bundle: ActiveBundle = {
  tenantId: TENANT,
  version: 1,
  code: CODE,
  manifest: {
    hash: BundleHash.parse(`sha256-${createHash("sha256").update(CODE).digest("hex")}`),
    bytes: CODE.length,
    hookPoints: ["tool.call", "tool.result", "turn.end"],
    sdkVersion: "1",
    entry: "bench",
  },
  config: {},
};

const usage = {
  inputTokens: { total: 10, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: undefined, reasoning: undefined },
};
function model(): MockLanguageModelV4 {
  let step = 0;
  return new MockLanguageModelV4({
    doGenerate: async () => {
      step += 1;
      const last = step >= STEPS;
      const call = { command: `ls build/${step}`, cwd: "/workspace" };
      return {
        content: last
          ? [{ type: "text", text: "Listed the build folder." }]
          : [{ type: "tool-call", toolCallId: `c${step}`, toolName: "shell", input: JSON.stringify(call) }],
        finishReason: { unified: last ? "stop" : "tool-calls", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}
const tools = {
  shell: tool({
    description: "Runs a shell command",
    inputSchema: z.object({ command: z.string(), cwd: z.string().optional() }),
    execute: async ({ command }) => `ran ${command}: build/ dist/`,
  }),
};

async function oneRun(runtime: HookRuntime | undefined): Promise<number> {
  const started = performance.now();
  if (runtime === undefined) {
    const result = await generateText({ model: model(), tools, stopWhen: stepCountIs(STEPS + 1), prompt: "Clean up" });
    if (result.steps.length !== STEPS) throw new Error(`expected ${STEPS} steps, got ${result.steps.length}`);
  } else {
    const guard = guardAiSdk(await runtime.openRun({ tenantId: TENANT }));
    const result = await generateText({
      model: guard.model(model()),
      tools: guard.tools(tools),
      prepareStep: guard.prepareStep,
      onStepFinish: guard.onStepFinish,
      stopWhen: [guard.stopWhen, stepCountIs(STEPS + 1)],
      prompt: "Clean up",
    });
    await guard.end();
    if (result.steps.length !== STEPS) throw new Error(`expected ${STEPS} steps, got ${result.steps.length}`);
  }
  return performance.now() - started;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const executor = await createHookExecutor({ workers: 2 });
const runtime = await createHookRuntime({ executor, bundles: fixedBundleSource([bundle]), decisionLog: false });
for (let i = 0; i < 3; i++) {
  await oneRun(runtime);
  await oneRun(undefined);
}
const bare: number[] = [];
const guarded: number[] = [];
for (let i = 0; i < RUNS; i++) {
  guarded.push(await oneRun(runtime));
  bare.push(await oneRun(undefined));
}
await runtime.close();
await executor.close();
const perStep = (xs: number[]) => median(xs) / STEPS;
const fmt = (ms: number) => `${ms.toFixed(3)} ms`;
console.log(`AI SDK generateText, ${STEPS} steps, ${RUNS} runs each, process sandbox (3 tenant hook points per step)`);
console.log(`  bare:    ${fmt(perStep(bare))} per step`);
console.log(`  guarded: ${fmt(perStep(guarded))} per step`);
console.log(
  `  added:   ${fmt(perStep(guarded) - perStep(bare))} per step (${(median(guarded) / median(bare)).toFixed(2)}× wall)`,
);
