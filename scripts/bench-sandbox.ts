/**
 * Sandbox benchmark (issue 3): one hook, one ~1 KB tool.call event, every path measured side by side in
 * one run. Run with `npm run bench` (node --no-node-snapshot --import tsx scripts/bench-sandbox.ts).
 *
 *   inline call vs raw isolated-vm applySync vs a plain function        target: inline ≤ 1.5× raw applySync
 *   process call (sequential) vs a raw fork-IPC round trip (same applySync)   target: ≤ 1.3× raw round trip
 *   process calls pipelined over the workers                             target: ≥ 50,000 calls/s on 2 cores
 *   cold first call of a new bundle in a running worker                  target: ≤ 3 ms
 *   memory per warm tenant isolate (worker RSS growth / tenants)         target: ≤ 2 MB
 *
 * Figures are medians of several rounds; this is a shared machine, so read the ratios, not the absolutes.
 * `--raw-child` is this script's own mode as the raw IPC baseline's child process.
 */
import { fork } from "node:child_process";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startProcessExecutor } from "../sandbox/supervisor/create-executor.js";
import { readRssBytes } from "../sandbox/supervisor/rss.js";
import { createInlineExecutor } from "../sandbox/worker/index.js";
import * as ivm from "../sandbox/worker/isolated-vm.js";
import { invokeHook } from "../src/dispatch/index.js";
import { BundleHash, Limits, type SandboxCall, TenantId } from "../src/protocol/index.js";

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
    const reply = call.applySync(undefined, ["tool.call", m.eventJson, m.ctxJson], { timeout: 50 });
    process.send?.({ id: m.id, reply });
  });
  process.on("disconnect", () => process.exit(0));
  process.send?.({ ready: true });
}

async function rawIpc(): Promise<{ seqUs: number; perSec: number }> {
  const child = fork(fileURLToPath(import.meta.url), ["--raw-child"], {
    execArgv: ["--no-node-snapshot", "--import", pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href],
  });
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

function ratio(a: number, b: number): string {
  return `${(a / b).toFixed(2)}×`;
}

async function main(): Promise<void> {
  const rows: string[][] = [];
  const verdicts: string[] = [];
  const row = (...cells: string[]) => rows.push(cells);
  const target = (name: string, ok: boolean, detail: string) =>
    verdicts.push(`${ok ? "met " : "MISS"}  ${name}: ${detail}`);
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
  const rawUs = await perCall(
    () => raw.applySync(undefined, ["tool.call", EVENT_JSON, call.ctxJson], { timeout: 50 }),
    20_000,
  );
  const inline = createInlineExecutor({ quiet: true });
  const inlineUs = await perCall(() => inline.execute(bundle, call), 20_000);
  const invokeUs = await perCall(() => invokeHook(inline, bundle, call, LIMITS), 20_000);
  row("plain function (JSON in, JSON out)", `${plainUs.toFixed(2)} µs`, "");
  row("raw isolated-vm applySync", `${rawUs.toFixed(2)} µs`, "1.00×");
  row("isohook inline execute", `${inlineUs.toFixed(2)} µs`, ratio(inlineUs, rawUs));
  row("isohook inline invokeHook (+ zod parse)", `${invokeUs.toFixed(2)} µs`, ratio(invokeUs, rawUs));
  target("inline ≤ 1.5× raw applySync", inlineUs <= 1.5 * rawUs, `${ratio(inlineUs, rawUs)} (execute)`);

  // Cold first call of a new bundle, inline, for reference.
  const coldInline: number[] = [];
  for (let i = 0; i < 20; i++) {
    const fresh = bundleOf(SCRIPT(`/* inline ${i} */`));
    const start = performance.now();
    await inline.execute(fresh, { ...call, ctxJson: ctxJsonFor(tenant, fresh.hash) });
    coldInline.push(performance.now() - start);
  }
  await inline.close();

  // Processes: raw fork IPC vs isohook process executor, json and advanced serialization.
  const rawRt = await rawIpc();
  row("raw fork-IPC round trip (same applySync)", `${rawRt.seqUs.toFixed(1)} µs`, "1.00×");
  const workers = availableParallelism();
  const measured = new Map<string, { seqUs: number; spread: number; many: number }>();
  for (const serialization of ["json", "advanced"] as const) {
    const executor = await startProcessExecutor({ workers, spareWorker: false }, { serialization });
    const seqUs = await perCall(() => executor.execute(bundle, call), 5_000);
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
    const spread = await throughput(
      (i) => executor.execute(bundle, spreadCalls[i % spreadCalls.length] ?? call),
      40_000,
      256,
    );
    const manyPerSec = await throughput(
      (i) => executor.execute(bundle, manyCalls[i % manyCalls.length] ?? call),
      40_000,
      256,
    );
    await executor.close();
    measured.set(serialization, { seqUs, spread, many: manyPerSec });
    const perSec = (n: number) => `${Math.round(n).toLocaleString("en-US")} calls/s`;
    row(`isohook process call, sequential (${serialization})`, `${seqUs.toFixed(1)} µs`, ratio(seqUs, rawRt.seqUs));
    row(`isohook process pipelined ×256, ${workers} tenants (${serialization})`, perSec(spread), "");
    row(`isohook process pipelined ×256, 64 tenants (${serialization})`, perSec(manyPerSec), "");
  }
  row(
    "raw fork-IPC pipelined ×256, 1 child, unbatched",
    `${Math.round(rawRt.perSec).toLocaleString("en-US")} calls/s`,
    "",
  );
  const json = measured.get("json") ?? { seqUs: Number.NaN, spread: 0, many: 0 };
  target(
    "process sequential ≤ 1.3× raw IPC",
    json.seqUs <= 1.3 * rawRt.seqUs,
    `${ratio(json.seqUs, rawRt.seqUs)} (json)`,
  );
  target(
    "pipelined ≥ 50,000 calls/s",
    json.spread >= 50_000,
    `${Math.round(json.spread).toLocaleString("en-US")} calls/s, ${workers} workers, 1 tenant each; ` +
      `${Math.round(json.many).toLocaleString("en-US")} with 64 tenants`,
  );

  // Cold first call and memory per warm tenant, in one running worker.
  const executor = await startProcessExecutor({ workers: 1, spareWorker: false });
  await executor.execute(bundle, call);
  const cold: number[] = [];
  for (let i = 0; i < 30; i++) {
    const fresh = bundleOf(SCRIPT(`/* process ${i} */`));
    // The caller's wait: `runMs` alone is the handler's run (the load is `loadMs`, the rest `queuedMs`).
    const start = performance.now();
    await executor.execute(fresh, { ...call, ctxJson: ctxJsonFor(tenant, fresh.hash) });
    cold.push(performance.now() - start);
  }
  const pid = executor.workers()[0]?.pid ?? -1;
  const tenantCount = 150;
  const before = (await readRssBytes(pid)) ?? Number.NaN;
  for (let i = 0; i < tenantCount; i++) {
    const t = TenantId.parse(`warm-${i}`);
    await executor.execute(bundle, { ...call, tenantId: t, ctxJson: ctxJsonFor(t, bundle.hash) });
  }
  const after = (await readRssBytes(pid)) ?? Number.NaN;
  await executor.close();
  const perTenantMb = (after - before) / tenantCount / 1024 / 1024;
  row("cold first call of a new bundle (process)", `${median(cold).toFixed(2)} ms`, "");
  row("cold first call of a new bundle (inline)", `${median(coldInline).toFixed(2)} ms`, "");
  row(`memory per warm tenant isolate (${tenantCount} tenants)`, `${perTenantMb.toFixed(2)} MB`, "");
  target("cold first call ≤ 3 ms", median(cold) <= 3, `${median(cold).toFixed(2)} ms median in a running worker`);
  target("≤ 2 MB per warm tenant", perTenantMb <= 2, `${perTenantMb.toFixed(2)} MB`);

  const width = Math.max(...rows.map((r) => (r[0] ?? "").length));
  console.log(
    `isohook sandbox benchmark — Node ${process.version}, ${availableParallelism()} cores, ~${EVENT_JSON.length} B event\n`,
  );
  console.log(`${"path".padEnd(width)}  ${"per call".padStart(18)}  ratio`);
  for (const [name, value, r] of rows)
    console.log(`${(name ?? "").padEnd(width)}  ${(value ?? "").padStart(18)}  ${r ?? ""}`);
  console.log("");
  for (const verdict of verdicts) console.log(verdict);
}

if (process.argv.includes("--raw-child")) rawChild();
else await main();
