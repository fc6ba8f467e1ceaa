/**
 * A/B of the process executor's channel against another checkout of isohook (a base commit), side by side in
 * one run: each round measures A and B (A B, then B A) (pipelined over 2 workers with one tenant each and with 64 tenants,
 * and sequential calls), so load changes hit both alike. Prints the median of each and B/A.
 *
 *   git archive main | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   node --no-node-snapshot --import tsx scripts/bench-channel-ab.ts /tmp/base [rounds] [--observe]
 *
 * `--observe` sends every call as an observe-only call (`priority: "observe"`).
 */
import { createHash } from "node:crypto";
import { loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { startProcessExecutor } from "../sandbox/supervisor/create-executor.js";
import type { SandboxBundle, SandboxCall, SandboxResult } from "../src/protocol/index.js";

interface Executor {
  execute(bundle: SandboxBundle, call: SandboxCall): Promise<SandboxResult>;
  shardOf(tenantId: string): number;
  close(): Promise<void>;
}
type Start = (options: { workers: number; spareWorker: boolean }) => Promise<Executor>;

const [baseDir, roundsText] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
if (baseDir === undefined) throw new Error("usage: bench-channel-ab.ts <base checkout> [rounds] [--observe]");
const rounds = Number(roundsText ?? 5);
const observe = process.argv.includes("--observe");

const HOOK = `{
  toolCall(event, ctx) {
    const command = String(event.call.args.command ?? "");
    if (/\\brm\\s+-[a-z]*r[a-z]*f?\\s+\\/(\\s|$)/.test(command)) return { type: "block", reason: "destructive" };
    if (event.call.args.cwd !== "/workspace") return { type: "rewrite", args: { ...event.call.args, cwd: "/workspace" } };
    ctx.state.calls = (ctx.state.calls ?? 0) + 1;
  },
}`;
const CODE = `var __isohook_bundle = (() => ({ default: { ...(${HOOK}), observe: (${HOOK}) } }))();`;
const bundle = { hash: `sha256-${createHash("sha256").update(CODE).digest("hex")}`, code: CODE } as SandboxBundle;
const EVENT_JSON = JSON.stringify({
  call: { id: "call_1", name: "shell", args: { command: `ls -la ${"src/".repeat(200)}`, cwd: "/tmp" } },
  batch: { index: 0, size: 1 },
});

function callOf(tenant: string): SandboxCall {
  const ctxJson = JSON.stringify({
    tenantId: tenant,
    runId: "run-1",
    turn: 0,
    hookId: `tenant:${tenant}`,
    bundle: { version: 1, hash: bundle.hash },
    config: {},
    state: {},
  });
  const call = { tenantId: tenant, point: "tool.call", eventJson: EVENT_JSON, ctxJson, timeoutMs: 50 };
  return (observe ? { ...call, priority: "observe" } : call) as SandboxCall;
}

async function throughput(executor: Executor, calls: SandboxCall[], total: number, window = 256): Promise<number> {
  let issued = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: window }, async () => {
      while (issued < total) {
        const result = await executor.execute(bundle, calls[issued++ % calls.length] as SandboxCall);
        if (result.type !== "replied") throw new Error(`call failed: ${JSON.stringify(result)}`);
      }
    }),
  );
  return total / ((performance.now() - start) / 1000);
}

async function sequentialUs(executor: Executor, call: SandboxCall, n: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < n; i++) await executor.execute(bundle, call);
  return ((performance.now() - start) * 1000) / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function main(): Promise<void> {
  const baseModule = pathToFileURL(join(baseDir as string, "sandbox/supervisor/create-executor.ts")).href;
  const base = (await import(baseModule)) as { startProcessExecutor: Start };
  const sides: [string, Start][] = [
    ["A base", base.startProcessExecutor],
    ["B this", startProcessExecutor as unknown as Start],
  ];
  const executors = await Promise.all(sides.map(([, start]) => start({ workers: 2, spareWorker: false })));
  const spreadOf = (executor: Executor) =>
    [0, 1].map((slot) => {
      let i = 0;
      while (executor.shardOf(`spread-${i}`) !== slot) i++;
      return callOf(`spread-${i}`);
    });
  const many = Array.from({ length: 64 }, (_, i) => callOf(`bench-${i}`));
  const figures = executors.map(() => ({ spread: [] as number[], many: [] as number[], seq: [] as number[] }));
  for (const executor of executors) await throughput(executor, many, 5_000);
  for (let r = 0; r < rounds; r++) {
    // A B, then B A: neither side always runs first.
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) {
      const executor = executors[k] as Executor;
      const f = figures[k] as (typeof figures)[number];
      f.spread.push(await throughput(executor, spreadOf(executor), 20_000));
      f.many.push(await throughput(executor, many, 20_000));
      f.seq.push(await sequentialUs(executor, many[0] as SandboxCall, 1_500));
    }
  }
  await Promise.all(executors.map((e) => e.close()));
  const [a, b] = figures.map((f) => ({ spread: median(f.spread), many: median(f.many), seq: median(f.seq) }));
  if (a === undefined || b === undefined) return;
  const perSec = (n: number) => `${Math.round(n).toLocaleString("en-US")} calls/s`;
  console.log(
    `channel A/B — Node ${process.version}, ${rounds} alternating rounds${observe ? ", observe-only calls" : ""}, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")} at the end`,
  );
  console.log(`                       A (base)            B (this)            B/A`);
  const line = (name: string, x: number, y: number, show: (n: number) => string) =>
    console.log(`${name.padEnd(22)} ${show(x).padEnd(19)} ${show(y).padEnd(19)} ${(y / x).toFixed(2)}×`);
  line("pipelined, 2 tenants", a.spread, b.spread, perSec);
  line("pipelined, 64 tenants", a.many, b.many, perSec);
  line("sequential", a.seq, b.seq, (n) => `${n.toFixed(1)} µs`);
}

await main();
