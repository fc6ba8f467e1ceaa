/**
 * A/B of the process executor's channel against another checkout of isohook (a base commit), side by side in
 * one run: each round measures A and B (A B, then B A), each on fresh workers (pipelined over 2 workers with one tenant each and with 64 tenants,
 * and sequential calls), so load changes hit both alike. Prints the median of each and B/A: the wall-clock
 * figure, and the CPU time host and workers spent per call (utime + stime from /proc), which other load on a
 * shared machine changes far less than it changes the wall clock.
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
import { cpuMsOf as processCpuMs } from "./process-cpu.js";

interface Executor {
  execute(bundle: SandboxBundle, call: SandboxCall): Promise<SandboxResult>;
  shardOf(tenantId: string): number;
  workers(): readonly { readonly pid: number }[];
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

/** Codes of calls that failed (a busy machine can time one out); printed, not thrown. */
const failures: string[] = [];

/** CPU ms of this process and the executor's workers so far. */
function cpuMsOf(executor: Executor): number {
  const { host, workers } = processCpuMs(executor.workers().map((w) => w.pid));
  return host + workers;
}

interface Measure {
  /** Calls per second, or µs per call for sequential calls. */
  readonly wall: number;
  /** CPU µs per call, host and workers. */
  readonly cpuUs: number;
}

async function throughput(executor: Executor, calls: SandboxCall[], total: number, window = 256): Promise<Measure> {
  let issued = 0;
  const cpu = cpuMsOf(executor);
  const start = performance.now();
  await Promise.all(
    Array.from({ length: window }, async () => {
      while (issued < total) {
        const result = await executor.execute(bundle, calls[issued++ % calls.length] as SandboxCall);
        if (result.type !== "replied") failures.push(result.failure.code);
      }
    }),
  );
  const wall = total / ((performance.now() - start) / 1000);
  return { wall, cpuUs: ((cpuMsOf(executor) - cpu) * 1000) / total };
}

async function sequential(executor: Executor, call: SandboxCall, n: number): Promise<Measure> {
  const cpu = cpuMsOf(executor);
  const start = performance.now();
  for (let i = 0; i < n; i++) await executor.execute(bundle, call);
  return { wall: ((performance.now() - start) * 1000) / n, cpuUs: ((cpuMsOf(executor) - cpu) * 1000) / n };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

const KINDS = ["pipelined, 2 tenants", "pipelined, 64 tenants", "sequential"] as const;

async function main(): Promise<void> {
  const baseModule = pathToFileURL(join(baseDir as string, "sandbox/supervisor/create-executor.ts")).href;
  const base = (await import(baseModule)) as { startProcessExecutor: Start };
  const sides = [base.startProcessExecutor, startProcessExecutor as unknown as Start];
  const spreadOf = (executor: Executor) =>
    [0, 1].map((slot) => {
      let i = 0;
      while (executor.shardOf(`spread-${i}`) !== slot) i++;
      return callOf(`spread-${i}`);
    });
  const many = Array.from({ length: 64 }, (_, i) => callOf(`bench-${i}`));
  const figures = sides.map(() => KINDS.map((): Measure[] => []));
  for (let r = 0; r < rounds; r++) {
    // A B, then B A: neither side always runs first. Each side gets fresh workers, alone on the machine.
    for (const k of r % 2 === 0 ? [0, 1] : [1, 0]) {
      const executor = await (sides[k] as Start)({ workers: 2, spareWorker: false });
      const [spread, sixtyFour, seq] = figures[k] as Measure[][];
      await throughput(executor, many, 10_000);
      spread?.push(await throughput(executor, spreadOf(executor), 20_000));
      sixtyFour?.push(await throughput(executor, many, 20_000));
      seq?.push(await sequential(executor, many[0] as SandboxCall, 1_500));
      await executor.close();
    }
  }
  console.log(
    `channel A/B — Node ${process.version}, ${rounds} alternating rounds${observe ? ", observe-only calls" : ""}, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")} at the end; medians`,
  );
  console.log(`${"".padEnd(22)} ${"A (base)".padEnd(17)} ${"B (this)".padEnd(17)} B/A    CPU µs/call A → B`);
  for (const [i, kind] of KINDS.entries()) {
    const [a, b] = figures.map((side) => side[i] ?? []);
    const wall = [a, b].map((m) => median((m ?? []).map((x) => x.wall)));
    const cpu = [a, b].map((m) => median((m ?? []).map((x) => x.cpuUs)));
    const show = (n = Number.NaN) =>
      kind === "sequential" ? `${n.toFixed(1)} µs` : `${Math.round(n).toLocaleString("en-US")} calls/s`;
    const ratio = ((wall[1] ?? Number.NaN) / (wall[0] ?? Number.NaN)).toFixed(2);
    const cpuText = `${cpu[0]?.toFixed(1)} → ${cpu[1]?.toFixed(1)} (${((cpu[1] ?? 0) / (cpu[0] ?? 1)).toFixed(2)}×)`;
    console.log(`${kind.padEnd(22)} ${show(wall[0]).padEnd(17)} ${show(wall[1]).padEnd(17)} ${ratio}×  ${cpuText}`);
  }
  if (failures.length > 0) console.log(`failed calls: ${failures.length} (${[...new Set(failures)].join(", ")})`);
}

await main();
