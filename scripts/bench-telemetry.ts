/**
 * Telemetry overhead per hook call (issue 15), every case side by side in one run:
 *   node --no-node-snapshot --import tsx scripts/bench-telemetry.ts
 *
 * The same `tool.call` dispatch (a tenant bundle, a ~1 KB event, a turn every 10 calls) with no
 * OpenTelemetry SDK registered, with the SDK registered (spans to a BatchSpanProcessor whose exporter
 * discards them, metrics to a reader that never exports during the run: the cost a platform pays per
 * call, not its exporter's), and with the SDK registered but every run sampled out (metrics only).
 * Two paths: the process sandbox running a real hook (what a call costs; the target is ≤ 5 % more per
 * call), and a canned executor (the host-side cost alone, in µs). Cases alternate round by round and the
 * median round is printed, so load from other processes hits them alike. Read the ratios.
 */
import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import { metrics, trace } from "@opentelemetry/api";
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from "@opentelemetry/sdk-metrics";
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import { startProcessExecutor } from "../sandbox/supervisor/create-executor.js";
import { createDispatcher } from "../src/dispatch/index.js";
import {
  type ActiveBundle,
  BundleHash,
  type HookExecutor,
  RunId,
  type SandboxResult,
  TenantId,
} from "../src/protocol/index.js";

const HOOK = `{
  toolCall(event, ctx) {
    const command = String(event.call.args.command ?? "");
    if (/\\brm\\s+-[a-z]*r[a-z]*f?\\s+\\/(\\s|$)/.test(command)) return { type: "block", reason: "destructive: rm -rf /" };
    if (event.call.args.cwd !== "/workspace") return { type: "rewrite", args: { ...event.call.args, cwd: "/workspace" } };
  },
}`;
const CODE = `var __isohook_bundle = (() => ({ default: (${HOOK}) }))();`;
const HASH = BundleHash.parse(`sha256-${createHash("sha256").update(CODE).digest("hex")}`);
const TENANT = TenantId.parse("acme");
const EVENT = {
  call: { id: "call_1", name: "shell", args: { command: `ls -la ${"src/".repeat(200)}`, cwd: "/tmp" } },
  batch: { index: 0, size: 1 },
};
const BUNDLE: ActiveBundle = {
  tenantId: TENANT,
  version: 1,
  code: CODE,
  manifest: { hash: HASH, bytes: CODE.length, hookPoints: ["tool.call"], sdkVersion: "1", entry: "bench" },
  config: {},
};
const ROUNDS = 9;
const UNLIMITED = { turnMs: 3_600_000, runMs: 86_400_000 };

const discardSpans: SpanExporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
const discardMetrics: PushMetricExporter = {
  export: (_metrics, done) => done({ code: 0 }),
  forceFlush: async () => {},
  shutdown: async () => {},
};
const meterProvider = new MeterProvider({
  readers: [new PeriodicExportingMetricReader({ exporter: discardMetrics, exportIntervalMillis: 3_600_000 })],
});
const tracing = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(discardSpans)] });
const sampledOut = new BasicTracerProvider({
  sampler: new AlwaysOffSampler(),
  spanProcessors: [new BatchSpanProcessor(discardSpans)],
});

type Mode = "none" | "sdk" | "sampled out";
const MODES: Mode[] = ["none", "sdk", "sampled out"];

function register(mode: Mode): void {
  trace.disable();
  metrics.disable();
  if (mode === "none") return;
  trace.setGlobalTracerProvider(mode === "sdk" ? tracing : sampledOut);
  metrics.setGlobalMeterProvider(meterProvider);
}

/** Wall and host CPU µs per call of `calls` tool.call dispatches in one run, a turn every 10 calls. */
async function round(executor: HookExecutor, calls: number): Promise<{ wall: number; cpu: number }> {
  const dispatcher = createDispatcher({ executor, budgets: UNLIMITED });
  const run = dispatcher.openRun({ tenantId: TENANT, runId: RunId.parse("run-bench"), bundle: BUNDLE });
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < calls; i++) {
    if (i % 10 === 0) run.beginTurn(i / 10 + 1);
    await run.dispatch("tool.call", EVENT);
  }
  await run.dispatch("run.end", {
    stopReason: "completed",
    turns: calls / 10,
    usage: { inputTokens: 0, outputTokens: 0 },
  });
  const wall = ((performance.now() - start) * 1000) / calls;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / calls };
}

async function measure(name: string, executor: HookExecutor, calls: number): Promise<void> {
  const samples = new Map<Mode, { wall: number[]; cpu: number[] }>(MODES.map((m) => [m, { wall: [], cpu: [] }]));
  for (let r = -1; r < ROUNDS; r++) {
    for (const mode of MODES) {
      register(mode);
      const { wall, cpu } = await round(executor, calls);
      if (r >= 0) {
        samples.get(mode)?.wall.push(wall);
        samples.get(mode)?.cpu.push(cpu);
      }
    }
  }
  register("none");
  const median = (values: number[] = []) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const baseWall = median(samples.get("none")?.wall);
  const baseCpu = median(samples.get("none")?.cpu);
  const versus = (us: number, base: number) =>
    ` (${(us / base).toFixed(2)}×, ${us >= base ? "+" : ""}${(us - base).toFixed(1)} µs)`;
  console.log(`\n${name}: ${calls} calls a round, median of ${ROUNDS} rounds`);
  console.log(`  ${"".padEnd(34)} ${"wall µs/call".padEnd(28)} host CPU µs/call`);
  for (const mode of MODES) {
    const wall = median(samples.get(mode)?.wall);
    const cpu = median(samples.get(mode)?.cpu);
    const label =
      mode === "none" ? "no SDK" : mode === "sdk" ? "SDK: spans + metrics" : "SDK, runs sampled out: metrics";
    const wallText = `${wall.toFixed(1)}${mode === "none" ? "" : versus(wall, baseWall)}`;
    const cpuText = `${cpu.toFixed(1)}${mode === "none" ? "" : versus(cpu, baseCpu)}`;
    console.log(`  ${label.padEnd(34)} ${wallText.padEnd(28)} ${cpuText}`);
  }
}

const canned: SandboxResult = {
  type: "replied",
  reply: JSON.stringify({ kind: "returned", result: { type: "rewrite", args: { cwd: "/workspace" } }, logs: [] }),
  cpuMs: 0.02,
  runMs: 0.03,
  queuedMs: 0.05,
};
const fake: HookExecutor = {
  mode: "inline",
  execute: async () => ({ ...canned }),
  describe: async () => {
    throw new Error("unused");
  },
  close: async () => {},
};

const processExecutor = await startProcessExecutor({ workers: 1, spareWorker: false });
try {
  await measure("process sandbox, real hook", processExecutor, 2_000);
  await measure("host side alone (canned executor)", fake, 20_000);
} finally {
  await processExecutor.close();
  await Promise.all([tracing.shutdown(), sampledOut.shutdown(), meterProvider.shutdown()]);
}
