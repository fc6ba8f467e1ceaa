/**
 * What relief (sandbox/supervisor/relief.ts) costs healthy traffic: the sandbox benchmark's sequential and
 * pipelined paths (the same ~1 KB tool.call, 2 workers, no spare) on two executors side by side in one
 * process, one with relief and one without (`holdSliceMs` 0), in alternating rounds so that the load of
 * this shared machine hits both alike. Both run the same worker; the worker's part of relief (reading its
 * channel after a call of 2 ms or more) costs a healthy call one clock read.
 *
 *   node --no-node-snapshot --import tsx scripts/bench-relief-ab.ts [--rounds 5]
 */
import { createHash } from "node:crypto";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { startProcessExecutor } from "../sandbox/supervisor/create-executor.js";
import type { ProcessExecutor } from "../sandbox/supervisor/process-executor.js";
import { BundleHash, type SandboxCall, TenantId } from "../src/protocol/index.js";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "5" } } });
const ROUNDS = Number(values.rounds);
const CODE = `var __isohook_bundle = (() => ({ default: { toolCall(event, ctx) {
  if (event.call.args.cwd !== "/workspace") return { type: "rewrite", args: { ...event.call.args, cwd: "/workspace" } };
} } }))();`;
const bundle = { hash: BundleHash.parse(`sha256-${createHash("sha256").update(CODE).digest("hex")}`), code: CODE };
const EVENT_JSON = JSON.stringify({
  call: { id: "call_1", name: "shell", args: { command: `ls -la ${"src/".repeat(200)}`, cwd: "/tmp" } },
  batch: { index: 0, size: 1 },
});
const callOf = (tenant: string): SandboxCall => ({
  tenantId: TenantId.parse(tenant),
  point: "tool.call",
  eventJson: EVENT_JSON,
  ctxJson: JSON.stringify({
    tenantId: tenant,
    runId: "run-1",
    turn: 0,
    hookId: `tenant:${tenant}`,
    bundle: { version: 1, hash: bundle.hash },
    config: {},
    state: {},
  }),
  timeoutMs: 50,
});
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function sequentialUs(executor: ProcessExecutor, n: number): Promise<number> {
  const call = callOf("seq");
  const start = performance.now();
  for (let i = 0; i < n; i++) await executor.execute(bundle, call);
  return ((performance.now() - start) * 1000) / n;
}

async function perSecond(executor: ProcessExecutor, calls: SandboxCall[], total: number): Promise<number> {
  let issued = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: 256 }, async () => {
      while (issued < total) await executor.execute(bundle, calls[issued++ % calls.length] as SandboxCall);
    }),
  );
  return total / ((performance.now() - start) / 1000);
}

async function main(): Promise<void> {
  const options = { workers: 2, spareWorker: false };
  const withRelief = await startProcessExecutor(options);
  const without = await startProcessExecutor(options, { holdSliceMs: 0 });
  const spreadOf = (executor: ProcessExecutor) =>
    [0, 1].map((slot) => {
      let i = 0;
      while (executor.shardOf(`spread-${i}`) !== slot) i++;
      return callOf(`spread-${i}`);
    });
  const spread = spreadOf(withRelief);
  const many = Array.from({ length: 64 }, (_, i) => callOf(`bench-${i}`));
  const figures = { sequential: [[], []], spread: [[], []], many: [[], []] } as Record<string, number[][]>;
  const executors = [withRelief, without];
  for (const executor of executors) {
    await sequentialUs(executor, 2_000);
    await perSecond(executor, many, 5_000);
  }
  for (let round = 0; round < ROUNDS; round++) {
    // A B, then B A: neither goes first every time.
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) {
      const executor = executors[k] as ProcessExecutor;
      figures.sequential?.[k]?.push(await sequentialUs(executor, 3_000));
      figures.spread?.[k]?.push(await perSecond(executor, spread, 30_000));
      figures.many?.[k]?.push(await perSecond(executor, many, 30_000));
    }
  }
  // A moved call opens an isolate for its tenant on the worker that takes it: relief costs memory there.
  const rssMb = (executor: ProcessExecutor) =>
    (executor.workers().reduce((sum, w) => sum + (w.rssBytes ?? 0), 0) / 2 ** 20).toFixed(0);
  const rss = executors.map(rssMb);
  await Promise.all(executors.map((e) => e.close()));
  const row = (name: string, unit: string, key: string, lowerIsBetter: boolean) => {
    const [on = Number.NaN, off = Number.NaN] = (figures[key] ?? []).map(median);
    const worse = lowerIsBetter ? on / off - 1 : off / on - 1;
    console.log(
      `  ${name.padEnd(40)} relief ${on.toFixed(1).padStart(9)} ${unit}  without ${off.toFixed(1).padStart(9)} ${unit}  ` +
        `${worse >= 0 ? "+" : ""}${(worse * 100).toFixed(1)} % (target ≤ +10 %)`,
    );
  };
  console.log(`relief on/off, ${ROUNDS} rounds (A B, B A, …), medians (load ${loadavg()[0]?.toFixed(1)} at the end)`);
  row("sequential, µs per call", "µs", "sequential", true);
  row("pipelined ×256, 2 tenants on 2 workers", "/s", "spread", false);
  row("pipelined ×256, 64 tenants on 2 workers", "/s", "many", false);
  console.log(`  workers' RSS at the end (last RSS check)  relief ${rss[0]} MB  without ${rss[1]} MB`);
}

await main();
