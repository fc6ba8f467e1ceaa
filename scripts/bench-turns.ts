/**
 * Agent-turn overhead (issue 14 item 5): a 20-turn scripted run (19 turns with one `shell` call, then the
 * answer) with 5 hooks — a tenant bundle on 3 points (`tool.call`, `tool.result`, `turn.end`) and 2
 * platform hooks (`tool.call` first, `tool.result` last) — against the same run with no hooks (no bundle,
 * no platform hooks), per turn, through the inline and the process executor. Runs alternate with and
 * without hooks so that the machine's load falls on both alike; figures are medians over the runs.
 *
 *   node --no-node-snapshot --import tsx scripts/bench-turns.ts        (also the second half of `npm run bench`)
 *
 * Target: ≤ 0.5 ms of hook overhead per turn in process mode (on a quiet machine). The process executor is
 * timed as the turns use it: each crossing's wall time and its split (`runMs` in the worker, `queuedMs` in
 * transit), then the same call repeated back to back, so a miss prints where the time goes.
 */
import { createHash } from "node:crypto";
import { availableParallelism } from "node:os";
import { createHookExecutor } from "../sandbox/supervisor/index.js";
import { createInlineExecutor } from "../sandbox/worker/index.js";
import { declaredTool, type ScriptedTurnInput, scriptedModel } from "../src/agent/index.js";
import {
  type ActiveBundle,
  BundleHash,
  type HookExecutor,
  type SandboxBundle,
  type SandboxCall,
  TenantId,
} from "../src/protocol/index.js";
import { createHookRuntime, fixedBundleSource, type HookRuntime } from "../src/runtime/index.js";

const TURNS = 20;
const RUNS = 21;
/**
 * Runs before the measured ones: the host's dispatch path and the worker reach their steady speed only
 * after some 1,000 turns (at 3 warm-up runs a hooked turn measured over twice its steady cost).
 */
const WARM_UP_RUNS = 60;
const TENANT = TenantId.parse("acme");

const CODE = `var __isohook_bundle = (() => ({ default: {
  toolCall(event, ctx) {
    const command = String(event.call.args.command ?? "");
    if (/\\brm\\s+-[a-z]*r[a-z]*f?\\s+\\/(\\s|$)/.test(command)) return { type: "block", reason: "destructive: rm -rf /" };
    if (event.call.args.cwd !== "/workspace") return { type: "rewrite", args: { ...event.call.args, cwd: "/workspace" } };
    ctx.state.calls = (ctx.state.calls ?? 0) + 1;
  },
  toolResult(event) {
    if (/sk-[A-Za-z0-9]{8,}/.test(String(event.result.content))) return { type: "patch", content: "[REDACTED]" };
  },
  turnEnd(event, ctx) {
    if (ctx.state.calls > 1000) return { type: "end", reason: "too many calls" };
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

const shell = declaredTool({
  name: "shell",
  parameters: {
    type: "object",
    properties: { command: { type: "string" }, cwd: { type: "string" } },
    required: ["command"],
    additionalProperties: false,
  },
  result: "ran {command} in {cwd}: build/ dist/ node_modules/",
});

function script(): ScriptedTurnInput[] {
  const turns: ScriptedTurnInput[] = Array.from({ length: TURNS - 1 }, (_, i) => ({
    toolCalls: [{ name: "shell", args: { command: `ls build/${i}`, cwd: "/workspace" } }],
  }));
  turns.push({ text: "Listed the build folder." });
  return turns;
}

/** A runtime (created once, as a host would) with or without the 5 hooks. */
async function runtimeFor(executor: HookExecutor, hooked: boolean): Promise<HookRuntime> {
  const runtime = await createHookRuntime({
    executor,
    bundles: fixedBundleSource(hooked ? [bundle] : []),
    dispatch: { budgets: { turnMs: 5_000, runMs: 60_000 } },
  });
  if (hooked) {
    runtime.registerPlatformHooks([
      {
        id: "platform:no-curl",
        position: "first",
        hooks: {
          toolCall: (event) =>
            String(event.call.args.command).includes("curl") ? { type: "block", reason: "no network" } : undefined,
        },
      },
      {
        id: "platform:audit",
        position: "last",
        hooks: { toolResult: (event) => (event.result.isError === true ? undefined : undefined) },
      },
    ]);
  }
  return runtime;
}

/** One run's wall time in ms. */
async function oneRun(runtime: HookRuntime): Promise<number> {
  const started = performance.now();
  const result = await runtime.runAgent({
    tenantId: TENANT,
    input: "Clean up",
    tools: [shell],
    model: scriptedModel(script()),
  });
  const ms = performance.now() - started;
  if (result.turns !== TURNS) throw new Error(`expected ${TURNS} turns, the run took ${result.turns}`);
  return ms;
}

/** The tenant bundle's three points (tool.call, tool.result, turn.end) cross into the sandbox each turn. */
const SANDBOX_CALLS_PER_TURN = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function measure(executor: HookExecutor): Promise<{ bare: number; hooked: number }> {
  const withHooks = await runtimeFor(executor, true);
  const without = await runtimeFor(executor, false);
  for (let i = 0; i < WARM_UP_RUNS; i++) {
    await oneRun(withHooks);
    await oneRun(without);
  }
  const bare: number[] = [];
  const hooked: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    hooked.push(await oneRun(withHooks));
    bare.push(await oneRun(without));
  }
  await withHooks.close();
  await without.close();
  return { bare: median(bare) / TURNS, hooked: median(hooked) / TURNS };
}

const inline = createInlineExecutor({ quiet: true });
const inlineFigures = await measure(inline);
await inline.close();
/** The executor, with each crossing's wall time and split kept (µs), and the last call kept to repeat. */
function timed(executor: HookExecutor) {
  const crossings = { wallUs: [] as number[], runUs: [] as number[], queuedUs: [] as number[] };
  let last: [SandboxBundle, SandboxCall] | undefined;
  const wrapped: HookExecutor = {
    mode: executor.mode,
    describe: (tenantId, bundle, signal) => executor.describe(tenantId, bundle, signal),
    close: () => executor.close(),
    async execute(bundle, call, signal) {
      const started = performance.now();
      const result = await executor.execute(bundle, call, signal);
      crossings.wallUs.push((performance.now() - started) * 1e3);
      crossings.runUs.push(result.runMs * 1e3);
      crossings.queuedUs.push((result.queuedMs ?? 0) * 1e3);
      if (call.point === "tool.call") last = [bundle, call];
      return result;
    },
  };
  /** µs per call of the last tool.call, repeated back to back (a crossing with nothing between). */
  const backToBack = async (): Promise<number> => {
    if (last === undefined) return Number.NaN;
    const n = 2_000;
    const started = performance.now();
    for (let i = 0; i < n; i++) await executor.execute(...last);
    return ((performance.now() - started) * 1e3) / n;
  };
  return { executor: wrapped, crossings, backToBack };
}

const processExecutor = timed(await createHookExecutor({ workers: 2 }));
const processFigures = await measure(processExecutor.executor);
const backToBackUs = await processExecutor.backToBack();
await processExecutor.executor.close();

console.log(
  `\nisohook agent-turn benchmark — Node ${process.version}, ${availableParallelism()} cores: a ${TURNS}-turn scripted run, ` +
    "5 hooks (tenant tool.call, tool.result, turn.end; platform tool.call first, tool.result last) vs none\n",
);
const rows: [string, { bare: number; hooked: number }][] = [
  ["inline", inlineFigures],
  ["process", processFigures],
];
console.log(`${"mode".padEnd(8)}  ${"no hooks".padStart(14)}  ${"5 hooks".padStart(14)}  ${"overhead".padStart(14)}`);
for (const [mode, f] of rows) {
  const fmt = (ms: number) => `${ms.toFixed(3)} ms/turn`;
  console.log(
    `${mode.padEnd(8)}  ${fmt(f.bare).padStart(14)}  ${fmt(f.hooked).padStart(14)}  ${fmt(f.hooked - f.bare).padStart(14)}`,
  );
}
const overhead = processFigures.hooked - processFigures.bare;
console.log(
  `\ntarget: process-mode hook overhead ≤ 0.5 ms per turn: ${overhead <= 0.5 ? "met" : "MISSED"} (${overhead.toFixed(3)} ms)`,
);
if (overhead > 0.5) {
  const inlineOverhead = inlineFigures.hooked - inlineFigures.bare;
  const { wallUs, runUs, queuedUs } = processExecutor.crossings;
  console.log(
    `      why: ${SANDBOX_CALLS_PER_TURN} sandbox calls a turn; the same hooks inline cost ${inlineOverhead.toFixed(3)} ms a turn, ` +
      `so the rest is the crossings: one takes ${median(wallUs).toFixed(0)} µs in a turn (median; worker runMs ` +
      `${median(runUs).toFixed(0)} µs, queuedMs ${median(queuedUs).toFixed(0)} µs), the same call back to back ` +
      `${backToBackUs.toFixed(0)} µs: between a turn's calls the worker sleeps, and waking it, and it running ` +
      "cold, costs more than the host's path (a CPU profile finds the host idle ~60 % of a hooked run)\n" +
      "      next: fewer crossings a turn (a turn's calls that do not depend on each other in one write), or a " +
      "worker that stays awake briefly after an answer (sandbox/worker/worker-main.ts)",
  );
}
