/**
 * Sandbox benchmark (issues 3 and 14): one hook, one ~1 KB tool.call event, every path measured side by side
 * in one run. Run with `npm run bench` (node --no-node-snapshot --import tsx scripts/bench-sandbox.ts).
 *
 *   inline call vs raw isolated-vm applySync vs a plain function        target: inline ≤ 1.3× raw applySync
 *   process call (sequential) vs a raw framed-pipe round trip (same applySync, alternating rounds)
 *                                                                        target: ≤ 1.15× the raw round trip
 *   process calls pipelined over 2 workers, one tenant each / 64 tenants target: ≥ 80,000 / ≥ 50,000 calls/s
 *   cold call of a new bundle / of a seen bundle (new tenant), in a running worker, as the caller waits
 *                                                                        target: ≤ 2 ms / ≤ 1 ms
 *   memory per warm tenant isolate (worker RSS growth / tenants)         target: ≤ 2 MB
 *
 * Each target prints met or MISS; a miss prints why (as measured) and the next step. Figures are medians of
 * several rounds; this is a shared machine, so read the ratios, not the absolutes (the load average is
 * printed). `--raw-child` and `--raw-framed-child` are this script's own modes as the raw baselines' child
 * processes (Node IPC, and the least a framed pipe needs).
 */
import { fork } from "node:child_process";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { Socket } from "node:net";
import { availableParallelism, loadavg } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startProcessExecutor } from "../sandbox/supervisor/create-executor.js";
import { readRssBytes } from "../sandbox/supervisor/rss.js";
import { createInlineExecutor } from "../sandbox/worker/index.js";
import * as ivm from "../sandbox/worker/isolated-vm.js";
import { SPARES_PER_KIND } from "../sandbox/worker/spare-isolates.js";
import { THREAD_CPU_CLOCK, threadCpuMs } from "../sandbox/worker/thread-cpu.js";
import { invokeHook } from "../src/dispatch/index.js";
import { BundleHash, Limits, type SandboxCall, type SandboxResult, TenantId } from "../src/protocol/index.js";
import { cpuMsOf } from "./process-cpu.js";

const HOOK = `{
  toolCall(event, ctx) {
    const command = String(event.call.args.command ?? "");
    if (/\\brm\\s+-[a-z]*r[a-z]*f?\\s+\\/(\\s|$)/.test(command)) return { type: "block", reason: "destructive: rm -rf /" };
    if (event.call.args.cwd !== "/workspace") return { type: "rewrite", args: { ...event.call.args, cwd: "/workspace" } };
    ctx.state.calls = (ctx.state.calls ?? 0) + 1;
  },
}`;
const SCRIPT = (salt = "") => `var __isohook_bundle = (() => { ${salt}\nreturn { default: (${HOOK}) }; })();`;
const EVENT_JSON = JSON.stringify({
  call: { id: "call_1", name: "shell", args: { command: `ls -la ${"src/".repeat(200)}`, cwd: "/tmp" } },
  batch: { index: 0, size: 1 },
});
const LIMITS = Limits.parse({});

function bundleOf(code: string) {
  return { hash: BundleHash.parse(`sha256-${createHash("sha256").update(code).digest("hex")}`), code };
}

function ctxJsonFor(tenant: string, hash: string): string {
  return JSON.stringify({
    tenantId: tenant,
    runId: "run-1",
    turn: 0,
    hookId: `tenant:${tenant}`,
    bundle: { version: 1, hash },
    config: {},
    state: {},
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** µs per call of `fn`, median over rounds. */
async function perCall(fn: () => unknown | Promise<unknown>, n: number, rounds = 5): Promise<number> {
  for (let i = 0; i < Math.min(n, 2_000); i++) await fn();
  const results: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    for (let i = 0; i < n; i++) await fn();
    results.push(((performance.now() - start) * 1000) / n);
  }
  return median(results);
}

/** µs per call of each of `fns`, measured in alternating rounds (A B A B …) so load changes hit all alike. */
async function alternating(fns: readonly (() => unknown | Promise<unknown>)[], n: number, rounds: number) {
  for (const fn of fns) for (let i = 0; i < Math.min(n, 2_000); i++) await fn();
  const results = fns.map((): number[] => []);
  for (let r = 0; r < rounds; r++) {
    for (const [k, fn] of fns.entries()) {
      const start = performance.now();
      for (let i = 0; i < n; i++) await fn();
      results[k]?.push(((performance.now() - start) * 1000) / n);
    }
  }
  return results.map(median);
}

/** Calls per second with `window` calls in flight, median over rounds. */
async function throughput(fn: (i: number) => Promise<unknown>, total: number, window: number, rounds = 3) {
  const results: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let issued = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: window }, async () => {
        while (issued < total) await fn(issued++);
      }),
    );
    results.push(total / ((performance.now() - start) / 1000));
  }
  return median(results);
}

/** The raw baseline's isolate: the same hook, called the obvious way with applySync and strings. */
function rawIsolate(): ivm.Reference {
  const isolate = new ivm.Isolate({ memoryLimit: 32 });
  const context = isolate.createContextSync();
  context.evalSync(`${SCRIPT()}
    globalThis.__call = (point, eventJson, ctxJson) => {
      const result = __isohook_bundle.default.toolCall(JSON.parse(eventJson), JSON.parse(ctxJson));
      return JSON.stringify({ kind: "returned", result: result ?? null, logs: [] });
    };`);
  return context.global.getSync("__call", { reference: true });
}

function rawChild(): void {
  const call = rawIsolate();
  process.on("message", (m: { id: number; eventJson: string; ctxJson: string }) => {
    const reply = call.applySync(undefined, ["tool.call", m.eventJson, m.ctxJson], { timeout: 5_000 });
    process.send?.({ id: m.id, reply });
  });
  process.on("disconnect", () => process.exit(0));
  process.send?.({ ready: true });
}

/**
 * The raw framed baseline's child: the same applySync behind the least a framed pipe needs — `u32 length |
 * u32 id | u32 eventJson bytes | eventJson | ctxJson` in, `u32 length | u32 id | reply` out, one write per
 * reply, no checks.
 */
function rawFramedChild(): void {
  const call = rawIsolate();
  const pipe = new Socket({ fd: 4, readable: true, writable: true });
  let held: Buffer = Buffer.alloc(0);
  pipe.on("data", (chunk: Buffer) => {
    let bytes = held.length > 0 ? Buffer.concat([held, chunk]) : chunk;
    let at = 0;
    while (bytes.length - at >= 4 && bytes.length - at - 4 >= bytes.readUInt32LE(at)) {
      const end = at + 4 + bytes.readUInt32LE(at);
      const id = bytes.readUInt32LE(at + 4);
      const eventEnd = at + 12 + bytes.readUInt32LE(at + 8);
      const eventJson = bytes.toString("utf8", at + 12, eventEnd);
      const ctxJson = bytes.toString("utf8", eventEnd, end);
      const reply = String(call.applySync(undefined, ["tool.call", eventJson, ctxJson], { timeout: 5_000 }));
      const out = Buffer.allocUnsafe(8 + reply.length * 3);
      const n = out.write(reply, 8, "utf8");
      out.writeUInt32LE(4 + n, 0);
      out.writeUInt32LE(id, 4);
      pipe.write(out.subarray(0, 8 + n));
      at = end;
    }
    bytes = bytes.subarray(at);
    held = bytes;
  });
  process.on("disconnect", () => process.exit(0));
  process.send?.({ ready: true });
}

const TSX_ARGV = ["--no-node-snapshot", "--import", pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href];

async function rawIpc(): Promise<{ seqUs: number; perSec: number }> {
  const child = fork(fileURLToPath(import.meta.url), ["--raw-child"], { execArgv: TSX_ARGV });
  await new Promise((resolve) => child.once("message", resolve));
  const pending = new Map<number, () => void>();
  child.on("message", (m: { id: number }) => {
    pending.get(m.id)?.();
    pending.delete(m.id);
  });
  let id = 0;
  const ctxJson = ctxJsonFor("raw", "raw");
  const call = () =>
    new Promise<void>((resolve) => {
      const i = id++;
      pending.set(i, resolve);
      child.send({ id: i, eventJson: EVENT_JSON, ctxJson });
    });
  const seqUs = await perCall(call, 5_000);
  const perSec = await throughput(call, 40_000, 256);
  child.disconnect();
  return { seqUs, perSec };
}

/** The raw framed round trip: one frame a call each way on a socket pair, batched by nothing but the kernel. */
async function rawFramed(): Promise<{ call: () => Promise<void>; close: () => void }> {
  const child = fork(fileURLToPath(import.meta.url), ["--raw-framed-child"], {
    execArgv: TSX_ARGV,
    stdio: ["ignore", "inherit", "inherit", "ipc", "pipe"],
  });
  await new Promise((resolve) => child.once("message", resolve));
  const pipe = child.stdio[4] as Socket;
  const pending = new Map<number, () => void>();
  let held: Buffer = Buffer.alloc(0);
  pipe.on("data", (chunk: Buffer) => {
    let bytes = held.length > 0 ? Buffer.concat([held, chunk]) : chunk;
    let at = 0;
    while (bytes.length - at >= 4 && bytes.length - at - 4 >= bytes.readUInt32LE(at)) {
      const end = at + 4 + bytes.readUInt32LE(at);
      const id = bytes.readUInt32LE(at + 4);
      bytes.toString("utf8", at + 8, end);
      pending.get(id)?.();
      pending.delete(id);
      at = end;
    }
    bytes = bytes.subarray(at);
    held = bytes;
  });
  let id = 0;
  const ctxJson = ctxJsonFor("raw", "raw");
  const call = () =>
    new Promise<void>((resolve) => {
      const i = id++;
      pending.set(i, resolve);
      const out = Buffer.allocUnsafe(12 + (EVENT_JSON.length + ctxJson.length) * 3);
      const eventBytes = out.write(EVENT_JSON, 12, "utf8");
      const ctxBytes = out.write(ctxJson, 12 + eventBytes, "utf8");
      out.writeUInt32LE(8 + eventBytes + ctxBytes, 0);
      out.writeUInt32LE(i, 4);
      out.writeUInt32LE(eventBytes, 8);
      pipe.write(out.subarray(0, 12 + eventBytes + ctxBytes));
    });
  const close = () => {
    child.disconnect();
    pipe.destroy();
  };
  return { call, close };
}

const signed = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(1)}`;

function ratio(a: number, b: number): string {
  return `${(a / b).toFixed(2)}×`;
}

async function main(): Promise<void> {
  const rows: string[][] = [];
  const verdicts: string[] = [];
  const row = (...cells: string[]) => rows.push(cells);
  const target = (name: string, ok: boolean, detail: string, reason?: string, next?: string) => {
    verdicts.push(`${ok ? "met " : "MISS"}  ${name}: ${detail}`);
    if (!ok && reason !== undefined) verdicts.push(`      why: ${reason}`);
    if (!ok && next !== undefined) verdicts.push(`      next: ${next}`);
  };
  const bundle = bundleOf(SCRIPT());
  const tenant = TenantId.parse("bench-tenant");
  const call: SandboxCall & { point: "tool.call" } = {
    tenantId: tenant,
    point: "tool.call",
    eventJson: EVENT_JSON,
    ctxJson: ctxJsonFor(tenant, bundle.hash),
    timeoutMs: LIMITS.timeoutMs,
  };

  // In-process: plain function, raw applySync, isohook inline.
  const hooks = new Function(`return (${HOOK});`)() as { toolCall: (e: unknown, c: unknown) => unknown };
  const plainUs = await perCall(
    () => JSON.stringify(hooks.toolCall(JSON.parse(EVENT_JSON), JSON.parse(call.ctxJson)) ?? null),
    50_000,
  );
  const raw = rawIsolate();
  const inline = createInlineExecutor({ quiet: true });
  // Alternating rounds, so that the machine's load falls on the three alike.
  const [rawUs = Number.NaN, inlineUs = Number.NaN, invokeUs = Number.NaN] = await alternating(
    [
      () => raw.applySync(undefined, ["tool.call", EVENT_JSON, call.ctxJson], { timeout: 5_000 }),
      () => inline.execute(bundle, call),
      () => invokeHook(inline, bundle, call, LIMITS),
    ],
    10_000,
    9,
  );
  row("plain function (JSON in, JSON out)", `${plainUs.toFixed(2)} µs`, "");
  row("raw isolated-vm applySync (alternating rounds with the two below)", `${rawUs.toFixed(2)} µs`, "1.00×");
  row("isohook inline execute", `${inlineUs.toFixed(2)} µs`, ratio(inlineUs, rawUs));
  row("isohook inline invokeHook (+ zod parse)", `${invokeUs.toFixed(2)} µs`, ratio(invokeUs, rawUs));
  const clockUs = await perCall(threadCpuMs, 50_000);
  target(
    "inline ≤ 1.3× raw applySync",
    inlineUs <= 1.3 * rawUs,
    `${ratio(inlineUs, rawUs)} (execute)`,
    `+${(inlineUs - rawUs).toFixed(1)} µs over raw applySync: the prelude's own work in the isolate (ctx.state and logs kept and capped, the reply built; ~1 µs), the pool's bookkeeping (the CPU guard's marks, the backstop, the cost fields) and the executor's promise; the thread's CPU clock (${THREAD_CPU_CLOCK}, ${clockUs.toFixed(1)} µs a read) is read at most once a millisecond`,
    "the ratio is of a ~7 µs base, so 0.1 µs moves it by 0.015×: profile IsolatePool.call (node --cpu-prof) for what is left outside applySync",
  );

  // Cold first call of a new bundle, inline, for reference.
  const coldInline: number[] = [];
  for (let i = 0; i < 20; i++) {
    const fresh = bundleOf(SCRIPT(`/* inline ${i} */`));
    const start = performance.now();
    await inline.execute(fresh, { ...call, ctxJson: ctxJsonFor(tenant, fresh.hash) });
    coldInline.push(performance.now() - start);
  }
  await inline.close();

  // Processes: the raw round trips (fork IPC; a framed pipe, the isohook channel's kind) vs the process executor.
  const rawRt = await rawIpc();
  row("raw fork-IPC round trip (same applySync)", `${rawRt.seqUs.toFixed(1)} µs`, "");
  const workers = availableParallelism();
  const framed = await rawFramed();
  const executor = await startProcessExecutor({ workers, spareWorker: false });
  // Sequential, side by side in alternating rounds: the raw framed round trip and one isohook call.
  const sequential = await alternating([framed.call, () => executor.execute(bundle, call)], 5_000, 7);
  const [framedUs = Number.NaN, seqUs = Number.NaN] = sequential;
  row("raw framed-pipe round trip (same applySync)", `${framedUs.toFixed(1)} µs`, "1.00×");
  row("isohook process call, sequential", `${seqUs.toFixed(1)} µs`, ratio(seqUs, framedUs));
  // One tenant per worker (warm isolate, no switching) and 64 tenants (isolates take turns on each worker).
  const perWorker = Array.from({ length: workers }, (_, slot) => {
    let i = 0;
    while (executor.shardOf(`spread-${i}`) !== slot) i++;
    return TenantId.parse(`spread-${i}`);
  });
  const many = Array.from({ length: 64 }, (_, i) => TenantId.parse(`bench-${i}`));
  const callsOf = (tenants: TenantId[]) =>
    tenants.map((t) => ({ ...call, tenantId: t, ctxJson: ctxJsonFor(t, bundle.hash) }));
  const spreadCalls = callsOf(perWorker);
  const manyCalls = callsOf(many);
  // Calls/s with 256 in flight, and the CPU a call, host and workers: it means something on a shared machine.
  const pids = executor.workers().map((w) => w.pid);
  const PIPELINED = 60_000;
  const THROUGHPUT_ROUNDS = 3;
  const pipelined = async (calls: SandboxCall[]) => {
    const before = cpuMsOf(pids);
    const run = (i: number) => executor.execute(bundle, calls[i % calls.length] ?? call);
    const perSec = await throughput(run, PIPELINED, 256, THROUGHPUT_ROUNDS);
    const after = cpuMsOf(pids);
    const us = (ms: number) => (ms * 1000) / (PIPELINED * THROUGHPUT_ROUNDS);
    return { perSec, hostUs: us(after.host - before.host), workerUs: us(after.workers - before.workers) };
  };
  const spread = await pipelined(spreadCalls);
  const many64 = await pipelined(manyCalls);
  const manyPerSec = many64.perSec;
  const framedPerSec = await throughput(framed.call, 40_000, 256);
  await executor.close();
  framed.close();
  const perSec = (n: number) => `${Math.round(n).toLocaleString("en-US")} calls/s`;
  const cpuText = (m: { hostUs: number; workerUs: number }) =>
    `CPU ${(m.hostUs + m.workerUs).toFixed(1)} µs a call (host ${m.hostUs.toFixed(1)} + workers ${m.workerUs.toFixed(1)})`;
  row(
    `isohook process pipelined ×256, ${workers} tenants on ${workers} workers`,
    perSec(spread.perSec),
    cpuText(spread),
  );
  row(`isohook process pipelined ×256, 64 tenants on ${workers} workers`, perSec(manyPerSec), cpuText(many64));
  row("raw fork-IPC pipelined ×256, 1 child, unbatched", perSec(rawRt.perSec), "");
  row("raw framed-pipe pipelined ×256, 1 child, unbatched", perSec(framedPerSec), "");
  target(
    "process sequential ≤ 1.15× the raw framed round trip",
    seqUs <= 1.15 * framedUs,
    `${ratio(seqUs, framedUs)} (${seqUs.toFixed(1)} vs ${framedUs.toFixed(1)} µs, alternating rounds)`,
    `of the ${signed(seqUs - framedUs)} µs over the raw loop, ${signed(inlineUs - rawUs)} µs is the pool and prelude (inline execute over raw applySync); a CPU profile of the worker puts its running-call mark (one pwrite a call, ~7 % of the worker's time) next, then the frames and the wire guard; the host's own path is ~5 % of its time (it waits ~70 %)`,
    "the running-call mark without a syscall a call (sandbox/worker/worker-main.ts, the channel's owners), then profile the host with --cpu-prof (ProcessInternals.execArgv)",
  );
  const ceiling = `the raw framed pipe does ${perSec(framedPerSec)} with one child; 2 cores are shared by the host, both workers and other load (load average ${loadavg()[0]?.toFixed(1)})`;
  target(
    `pipelined ≥ 80,000 calls/s on ${workers} workers`,
    spread.perSec >= 80_000,
    `${perSec(spread.perSec)}, ${cpuText(spread)}`,
    ceiling,
    "80,000 calls/s on 2 cores needs ≤ 25 µs of CPU a call, host and workers together (the CPU figure above); a worker now runs a backlog as one batch and writes one running mark for an isolate's calls in a row, so applySync (~8 µs raw) and the reply write are most of its share: next, the host's share (profile worker-channel.ts and pending-call.ts under --cpu-prof), then one reply frame per batch instead of one per call",
  );
  target(
    "pipelined ≥ 50,000 calls/s with 64 tenants",
    manyPerSec >= 50_000,
    `${perSec(manyPerSec)}, ${cpuText(many64)}`,
    `a worker runs a backlog as one batch grouped by isolate, but 256 calls in flight over 64 tenants are 4 a tenant, and a worker's groups hold ~2 calls (one running mark per ~2 calls, measured), so most calls still enter another isolate (${ratio(spread.perSec, manyPerSec)} slower than one tenant per worker); ${ceiling}`,
    "entering an isolate is the cost (applySync into another isolate than the last): measure isolated-vm's enter/exit against a warm one, and whether a worker per core with fewer tenants each (more workers) groups better",
  );

  // Cold first call and memory per warm tenant, in one running worker.
  const coldExecutor = await startProcessExecutor({ workers: 1, spareWorker: false });
  await coldExecutor.execute(bundle, call);
  const cold: number[] = [];
  const split = (): Record<"loadMs" | "runMs" | "queuedMs", number[]> => ({ loadMs: [], runMs: [], queuedMs: [] });
  const coldSplit = split();
  const seenSplit = split();
  const note = (into: ReturnType<typeof split>, r: SandboxResult) => {
    into.loadMs.push(r.loadMs ?? 0);
    into.runMs.push(r.runMs);
    into.queuedMs.push(r.queuedMs ?? 0);
  };
  const parts = (of: ReturnType<typeof split>) =>
    `median loadMs ${median(of.loadMs).toFixed(2)} + runMs ${median(of.runMs).toFixed(2)} + queuedMs ${median(of.queuedMs).toFixed(2)}`;
  for (let i = 0; i < 30; i++) {
    const fresh = bundleOf(SCRIPT(`/* process ${i} */`));
    // The caller's wait: `runMs` alone is the handler's run (the load is `loadMs`, the rest `queuedMs`).
    const start = performance.now();
    const r = await coldExecutor.execute(fresh, { ...call, ctxJson: ctxJsonFor(tenant, fresh.hash) });
    cold.push(performance.now() - start);
    note(coldSplit, r);
  }
  // The same after a quiet spell (the spares are back): a new bundle, then a new tenant of a seen bundle.
  const quietNew: number[] = [];
  const quietSeen: number[] = [];
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const fresh = bundleOf(SCRIPT(`/* quiet ${i} */`));
    let start = performance.now();
    await coldExecutor.execute(fresh, { ...call, ctxJson: ctxJsonFor(tenant, fresh.hash) });
    quietNew.push(performance.now() - start);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const t = TenantId.parse(`quiet-${i}`);
    start = performance.now();
    await coldExecutor.execute(bundle, { ...call, tenantId: t, ctxJson: ctxJsonFor(t, bundle.hash) });
    quietSeen.push(performance.now() - start);
  }
  const pid = coldExecutor.workers()[0]?.pid ?? -1;
  const tenantCount = 150;
  const before = (await readRssBytes(pid)) ?? Number.NaN;
  // Each new tenant's first call is a cold call of a bundle the worker has seen (compiled) before.
  const coldSeen: number[] = [];
  for (let i = 0; i < tenantCount; i++) {
    const t = TenantId.parse(`warm-${i}`);
    const start = performance.now();
    const r = await coldExecutor.execute(bundle, { ...call, tenantId: t, ctxJson: ctxJsonFor(t, bundle.hash) });
    coldSeen.push(performance.now() - start);
    note(seenSplit, r);
  }
  const after = (await readRssBytes(pid)) ?? Number.NaN;
  await coldExecutor.close();
  const perTenantMb = (after - before) / tenantCount / 1024 / 1024;
  const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)] ?? Number.NaN;
  row(
    "cold first call of a new bundle (process), 30 back to back",
    `${median(cold).toFixed(2)} ms`,
    `p90 ${p90(cold).toFixed(2)} ms`,
  );
  row(
    `cold first call of a seen bundle, new tenant (process), ${tenantCount} back to back`,
    `${median(coldSeen).toFixed(2)} ms`,
    `p90 ${p90(coldSeen).toFixed(2)} ms`,
  );
  row("cold first call of a new bundle (process), after 50 ms quiet", `${median(quietNew).toFixed(2)} ms`, "");
  row("cold first call of a seen bundle (process), after 50 ms quiet", `${median(quietSeen).toFixed(2)} ms`, "");
  row("cold first call of a new bundle (inline)", `${median(coldInline).toFixed(2)} ms`, "");
  row(`memory per warm tenant isolate (${tenantCount} tenants)`, `${perTenantMb.toFixed(2)} MB`, "");
  target(
    "cold call of a new bundle ≤ 2 ms as the caller waits",
    median(cold) <= 2,
    `${median(cold).toFixed(2)} ms median in a running worker`,
    `${parts(coldSplit)}; a loadMs over ~0.5 ms is a call that found none of the ${SPARES_PER_KIND} spares per limits (the burst starts as the worker fills them; an isolate takes ~5–6 ms of CPU to make on this VM, Isolate::New ~4 ms and its context ~1.2 ms, made off the worker's thread by isolate-maker.ts); queued is transit and the CPU that the host, the worker's thread and the pool thread share (each step: scripts/probe-cold-call.ts)`,
    "two preparations at once (PREPARING_AT_ONCE) gained nothing at load 7 (scripts/probe-cold-call.ts, docs/performance.md): measure them on a quiet machine; a bundle code cache made at upload saves at most the 'after 50 ms quiet' rows' new-over-seen difference (a worker compiles a seen bundle from its own cache), so the burst's isolate preparations come first",
  );
  target(
    "cold call of a seen bundle ≤ 1 ms as the caller waits",
    median(coldSeen) <= 1,
    `${median(coldSeen).toFixed(2)} ms median, a new tenant each call`,
    `${parts(seenSplit)}; ${tenantCount} cold calls back to back outrun the refill after the first ${SPARES_PER_KIND} spares, so most prepare their own isolate (~5–6 ms of CPU, mostly V8's Isolate::New)`,
    "as above; after a quiet spell (spares ready) see the 'after 50 ms quiet' row",
  );
  target("≤ 2 MB per warm tenant", perTenantMb <= 2, `${perTenantMb.toFixed(2)} MB`);

  const width = Math.max(...rows.map((r) => (r[0] ?? "").length));
  console.log(
    `isohook sandbox benchmark — Node ${process.version}, ${availableParallelism()} cores, load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")} at the end, ~${EVENT_JSON.length} B event\n`,
  );
  console.log(`${"path".padEnd(width)}  ${"per call".padStart(18)}  ratio`);
  for (const [name, value, r] of rows)
    console.log(`${(name ?? "").padEnd(width)}  ${(value ?? "").padStart(18)}  ${r ?? ""}`);
  console.log("");
  for (const verdict of verdicts) console.log(verdict);
}

if (process.argv.includes("--raw-child")) rawChild();
else if (process.argv.includes("--raw-framed-child")) rawFramedChild();
else await main();
