/**
 * Probe: what a cold call costs, part by part. Not a test; prints four tables. Run:
 *
 *   node --no-node-snapshot --import tsx scripts/probe-cold-call.ts [--rounds 20] [--hogs 0]
 *
 * 1. Each step of opening an isolate for a bundle, timed alone: creating the isolate, its context, the
 *    prelude compiled and run (the first time, then from the worker's own code cache of its first compile
 *    or a warm one made after a run), the bundle compiled (first, then cached) and run, adopted, and the
 *    handler's first and second calls; and how long a spare takes, and how much of that blocks this
 *    thread, made with `new ivm.Isolate` here (before) and wholly on isolated-vm's threads (the maker).
 * 2. Cold calls back to back in this thread, phase by phase (queued behind a refill, spare taken or isolate
 *    prepared, bundle compile, run and adopt, first call, what the caller waits), for several stocks of
 *    spares in alternating rounds: made here (before) or by the maker, 3 or 6 deep, 1 or 2 at once.
 * 3. `loadMs` of a cold call (isolate and bundle evaluation) next to the handler itself (`runMs`), for every
 *    example hook in hooks/ and a synthetic ~760 KB bundle (under the 1 MB cap), with and without prepared
 *    spare isolates, optionally while `--hogs` busy-looping processes compete for the CPU.
 * 4. In a running process worker, as the caller waits: back-to-back cold calls of new bundles, and of a
 *    bundle the worker has seen (a new tenant each call), split into `loadMs`, `runMs` and `queuedMs`
 *    (transit and the wait behind the refill of a spare).
 *
 * Why it matters: until the load got its own timeout, a cold call's timeout (50 ms by default) covered
 * evaluating the bundle too, so a large bundle, or any bundle on a starved machine, timed out on every
 * cold call — including the call right after a timeout, whose isolate is always fresh.
 */
import { fork } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startProcessExecutor } from "../sandbox/supervisor/create-executor.js";
import { IsolatePool } from "../sandbox/worker/index.js";
import { isolateMaker as maker } from "../sandbox/worker/isolate-maker.js";
import * as ivm from "../sandbox/worker/isolated-vm.js";
import { preludeScript } from "../sandbox/worker/prelude-script.js";
import { type PreparedIsolate, prepareIsolate, prepareIsolateOffThread } from "../sandbox/worker/prepared-isolate.js";
import { type PrepareSpare, SPARES_PER_KIND, SpareIsolates } from "../sandbox/worker/spare-isolates.js";
import { compileHook } from "../src/bundler/index.js";
import { BundleHash, DEFAULT_LIMITS, type SandboxLimits, TenantId } from "../src/protocol/index.js";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "20" }, hogs: { type: "string", default: "0" } },
});
const ROUNDS = Number(values.rounds);
const HOGS = Number(values.hogs);

const limits: SandboxLimits = {
  memoryMb: DEFAULT_LIMITS.memoryMb,
  maxResultChars: DEFAULT_LIMITS.maxResultChars,
  maxStateChars: DEFAULT_LIMITS.maxStateChars,
  maxLogLines: DEFAULT_LIMITS.maxLogLines,
  maxLogChars: DEFAULT_LIMITS.maxLogChars,
  loadTimeoutMs: 10_000,
};
const eventJson = JSON.stringify({
  call: { id: "c1", name: "shell", args: { command: "ls -la" } },
  batch: { index: 0, size: 1 },
});

/** Many small functions and a table built at load: what a hook importing a sizeable library looks like. */
function syntheticBundle(): { hash: BundleHash; code: string } {
  const parts: string[] = [];
  for (let i = 0; i < 6000; i++) {
    parts.push(`function f${i}(x){return x.map(v=>v*${i}+${i % 7}).filter(v=>v%3!==${i % 3}).reduce((a,b)=>a+b,0);}`);
  }
  const table = `const TABLE={${Array.from({ length: 3000 }, (_, i) => `k${i}:"${"v".repeat(40)}${i}"`).join(",")}};`;
  const code = `var __isohook_bundle=(()=>{${parts.join("\n")}\n${table}\nconst RE=Object.keys(TABLE).map(k=>new RegExp("^"+k+"$"));\nreturn{default:{toolCall(){return RE.length>0?undefined:f1([1]);}}};})();`;
  return { hash: BundleHash.parse(`sha256-${"5".repeat(64)}`), code };
}

const hooksDir = fileURLToPath(new URL("../hooks/", import.meta.url));
const bundles: { name: string; hash: BundleHash; code: string }[] = [];
for (const name of readdirSync(hooksDir).sort()) {
  const built = await compileHook(`${hooksDir}${name}`, { root: hooksDir });
  bundles.push({ name, hash: built.hash, code: built.code });
}
const synthetic = syntheticBundle();
bundles.push({ name: `synthetic (${Math.round(synthetic.code.length / 1024)} KB)`, ...synthetic });

const hogs = Array.from({ length: HOGS }, () => fork("-e", ["for(;;){}"], { execArgv: [] }));
const stats = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0).toFixed(1);
  return `${at(0.5).padStart(6)} ${at(0.95).padStart(6)} ${(sorted.at(-1) ?? 0).toFixed(1).padStart(6)}`;
};
const onThreadCache = new Map<string, ivm.ExternalCopy>();
/** The spares before the maker: `new ivm.Isolate` on this thread, the rest on isolated-vm's threads. */
const onThreadPrepare: PrepareSpare = async (prelude, memoryMb) => {
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
  const context = await isolate.createContext();
  const cachedData = onThreadCache.get(prelude);
  const script = await isolate.compileScript(prelude, cachedData ? { cachedData } : { produceCachedData: true });
  if (script.cachedData !== undefined && cachedData === undefined) onThreadCache.set(prelude, script.cachedData);
  const entries = await script.run(context, { reference: true, timeout: 5_000 });
  const [call, collect, adopt, describe] = [0, 1, 2, 3].map((i) => entries.getSync(i, { reference: true }));
  if (!call || !collect || !adopt || !describe) throw new Error("the prelude returned fewer than four entries");
  return { isolate, context, call, collect, adopt, describe };
};
const spareKinds: [string, PrepareSpare][] = [
  ["Isolate::New on this thread (before)", onThreadPrepare],
  [
    "all on isolated-vm's threads (maker)",
    (prelude, memoryMb) => prepareIsolateOffThread(maker, prelude, memoryMb, 5_000),
  ],
];
const makerPrepare: PrepareSpare = (prelude, memoryMb) => prepareIsolateOffThread(maker, prelude, memoryMb, 5_000);
/** Ways of keeping spares compared back to back: how they are made, how many per limits, how many at once. */
const stocks: [string, ConstructorParameters<typeof SpareIsolates>[0]][] = [
  ["before: Isolate::New here, 3 spares", { prepare: onThreadPrepare, perKind: 3, inFlight: 1 }],
  ["maker, 3 spares, 1 at once", { prepare: makerPrepare, perKind: 3, inFlight: 1 }],
  ["maker, 3 spares, 2 at once", { prepare: makerPrepare, perKind: 3, inFlight: 2 }],
  ["maker, 6 spares, 1 at once", { prepare: makerPrepare, perKind: 6, inFlight: 1 }],
  ["maker, 6 spares, 2 at once", { prepare: makerPrepare, perKind: 6, inFlight: 2 }],
];

/** Section 1: each step of opening an isolate, alone. */
async function parts(code: string): Promise<void> {
  const prelude = preludeScript(limits);
  const times = new Map<string, number[]>();
  const lap = (name: string, since: number): number => {
    const now = performance.now();
    times.set(name, [...(times.get(name) ?? []), now - since]);
    return now;
  };
  const ctxJson = '{"state":{}}';
  let preludeCache: ivm.ExternalCopy | undefined;
  let warmCache: ivm.ExternalCopy | undefined;
  let bundleCache: ivm.ExternalCopy | undefined;
  for (let i = 0; i < ROUNDS; i++) {
    // Round 0 compiles the prelude from source; then rounds alternate between its first compile's cache and
    // a warm one (compiled again after a run, as the maker makes it).
    const cache = i === 0 ? undefined : i % 2 === 1 || warmCache === undefined ? preludeCache : warmCache;
    const kind = cache === undefined ? "first" : cache === warmCache ? "warm code cache" : "first compile's cache";
    let at = performance.now();
    const isolate = new ivm.Isolate({ memoryLimit: limits.memoryMb });
    at = lap("new Isolate", at);
    const context = isolate.createContextSync();
    at = lap("createContextSync", at);
    const options = { filename: "isohook:prelude" };
    const preludeScriptCompiled = isolate.compileScriptSync(
      prelude,
      cache === undefined ? { ...options, produceCachedData: true } : { ...options, cachedData: cache },
    );
    at = lap(`prelude compile (${kind})`, at);
    preludeCache ??= preludeScriptCompiled.cachedData;
    const entries = preludeScriptCompiled.runSync(context, { reference: true, timeout: 5_000 });
    const call = entries.getSync(0, { reference: true });
    const adopt = entries.getSync(2, { reference: true });
    at = lap(`prelude run + entry references (${kind})`, at);
    const script = isolate.compileScriptSync(
      `${code}\n;void 0;`,
      bundleCache === undefined ? { produceCachedData: true } : { cachedData: bundleCache },
    );
    at = lap(bundleCache === undefined ? "bundle compile (first)" : "bundle compile (own code cache)", at);
    bundleCache ??= script.cachedData;
    script.runSync(context, { timeout: 5_000 });
    at = lap("bundle top-level run", at);
    adopt.applySync(undefined, [], { timeout: 5_000 });
    at = lap("adopt", at);
    call.applySync(undefined, ["tool.call", eventJson, ctxJson], { timeout: 5_000 });
    at = lap(`handler, first call (prelude: ${kind})`, at);
    call.applySync(undefined, ["tool.call", eventJson, ctxJson], { timeout: 5_000 });
    at = lap("handler, second call", at);
    warmCache ??= isolate.compileScriptSync(prelude, { ...options, produceCachedData: true }).cachedData;
    isolate.dispose();
    lap("dispose", at);
    for (const [name, prepare] of spareKinds) {
      const started = performance.now();
      const prepared = prepare(prelude, limits.memoryMb);
      lap(`spare, ${name}: this thread blocked`, started);
      (await prepared).isolate.dispose();
      lap(`spare, ${name}: ready after`, started);
    }
  }
  console.log(`each step of opening an isolate, ${ROUNDS} rounds — ms: median p95 max`);
  for (const [name, xs] of times) console.log(`${name.padEnd(66)}${stats(xs).padStart(22)}`);
  console.log("");
}

/** A round trip's worth of quiet between a reply and the next call, as in a running worker. */
const GAP_MS = 0.15;

/**
 * Section 2: cold calls back to back in this thread, phase by phase, for each way of preparing spares in
 * alternating rounds. A call "arrives" `GAP_MS` after the one before it ended; whatever ran on this thread
 * in between (a refill's `setImmediate`) delays it (`queued`), as it delays the next call in a worker.
 */
async function backToBack(code: string, calls: number): Promise<void> {
  const prelude = preludeScript(limits);
  type Row = Record<"queued" | "take" | "compile" | "run" | "first" | "waits", number[]> & { missed: number };
  const rows = new Map<string, Row>();
  const ctxJson = '{"state":{}}';
  const seenCache = new Map<string, ivm.ExternalCopy>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, options] of stocks) {
      for (const seen of [false, true]) {
        const label = `${seen ? "seen" : "new"} bundle, ${name}`;
        const row: Row = rows.get(label) ?? {
          queued: [],
          take: [],
          compile: [],
          run: [],
          first: [],
          waits: [],
          missed: 0,
        };
        rows.set(label, row);
        const spares = new SpareIsolates(options);
        spares.want(prelude, limits.memoryMb);
        while (spares.size < (options?.perKind ?? SPARES_PER_KIND))
          await new Promise((resolve) => setTimeout(resolve, 1));
        const used: PreparedIsolate[] = [];
        let arrival = performance.now();
        for (let i = 0; i < calls; i++) {
          while (performance.now() < arrival) await new Promise((resolve) => setImmediate(resolve));
          let at = performance.now();
          row.queued.push(at - arrival);
          let prepared = spares.take(prelude, limits.memoryMb);
          if (prepared === undefined) row.missed++;
          prepared ??= prepareIsolate(prelude, limits.memoryMb, 5_000);
          used.push(prepared);
          at = lapInto(row.take, at);
          const source = seen ? `${code}\n;void 0;` : `${code}\n/* ${round} ${i} */;void 0;`;
          const cachedData = seen ? seenCache.get(source) : undefined;
          const script = prepared.isolate.compileScriptSync(
            source,
            cachedData ? { cachedData } : { produceCachedData: seen },
          );
          if (seen && cachedData === undefined && script.cachedData) seenCache.set(source, script.cachedData);
          at = lapInto(row.compile, at);
          script.runSync(prepared.context, { timeout: 5_000 });
          prepared.adopt.applySync(undefined, [], { timeout: 5_000 });
          at = lapInto(row.run, at);
          prepared.call.applySync(undefined, ["tool.call", eventJson, ctxJson], { timeout: 5_000 });
          at = lapInto(row.first, at);
          row.waits.push(at - arrival);
          arrival = at + GAP_MS;
        }
        spares.dispose();
        for (const p of used) p.isolate.dispose();
      }
    }
  }
  console.log(
    `cold calls back to back in this thread, ${calls} per round, ${ROUNDS} rounds alternating, next call ${GAP_MS} ms after a reply — ms: median p95 max`,
  );
  const columns = ["queued", "take", "compile", "run", "first", "waits"] as const;
  const titles = [
    "queued (refill)",
    "spare or prepare",
    "bundle compile",
    "bundle run+adopt",
    "first call",
    "caller waits",
  ];
  console.log(`${"".padEnd(50)}${titles.map((t) => t.padStart(22)).join("")}  no spare`);
  for (const [label, row] of rows) {
    console.log(
      `${label.padEnd(50)}${columns.map((c) => stats(row[c]).padStart(22)).join("")}  ${row.missed}/${row.waits.length}`,
    );
  }
  console.log("");
}

function lapInto(into: number[], since: number): number {
  const now = performance.now();
  into.push(now - since);
  return now;
}

/** Section 4: back-to-back cold calls in a running process worker, as the caller waits. */
async function inWorker(code: string): Promise<void> {
  const executor = await startProcessExecutor({ workers: 1, spareWorker: false, limits: { timeoutMs: 1_000 } });
  try {
    const hashOf = (i: number) => BundleHash.parse(`sha256-${i.toString(16).padStart(64, "0")}`);
    const call = (tenant: string) => ({
      tenantId: TenantId.parse(tenant),
      point: "tool.call" as const,
      eventJson,
      ctxJson: '{"state":{}}',
      timeoutMs: 1_000,
    });
    const seen = { hash: hashOf(1), code };
    await executor.execute(seen, call("warm-up"));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const rows = new Map<string, Record<"wait" | "load" | "run" | "queued", number[]>>();
    const measure = async (name: string, bundle: { hash: BundleHash; code: string }, tenant: string) => {
      const row = rows.get(name) ?? { wait: [], load: [], run: [], queued: [] };
      rows.set(name, row);
      const started = performance.now();
      const result = await executor.execute(bundle, call(tenant));
      row.wait.push(performance.now() - started);
      row.load.push(result.loadMs ?? 0);
      row.run.push(result.runMs);
      row.queued.push(result.queuedMs ?? 0);
    };
    for (let i = 0; i < ROUNDS; i++)
      await measure("new bundle", { hash: hashOf(100 + i), code: `${code}\n/* ${i} */` }, "t");
    for (let i = 0; i < ROUNDS; i++) await measure("seen bundle, new tenant", seen, `seen-${i}`);
    console.log(
      `cold calls back to back in a running worker (${SPARES_PER_KIND} spares per limits), ${ROUNDS} each — ms: median p95 max`,
    );
    console.log(
      `${"".padEnd(26)}${"caller waits".padStart(22)}${"loadMs".padStart(22)}${"runMs".padStart(22)}${"queuedMs".padStart(22)}`,
    );
    for (const [name, row] of rows) {
      console.log(
        `${name.padEnd(26)}${stats(row.wait).padStart(22)}${stats(row.load).padStart(22)}${stats(row.run).padStart(22)}${stats(row.queued).padStart(22)}`,
      );
    }
  } finally {
    await executor.close();
  }
}

try {
  await new Promise((resolve) => setTimeout(resolve, 200));
  const typical = bundles.find((b) => b.name === "block-destructive-shell") ?? bundles[0];
  if (typical !== undefined) {
    console.log(`bundle: ${typical.name} (${Math.round(typical.code.length / 1024)} KB), ${HOGS} CPU hogs\n`);
    await parts(typical.code);
  }
  if (typical !== undefined) await backToBack(typical.code, 30);
  console.log(`cold call of each bundle, ${ROUNDS} rounds, ${HOGS} CPU hogs — ms: median p95 max`);
  console.log(
    `${"bundle".padEnd(28)}${"load (spare)".padStart(22)}${"load (no spare)".padStart(22)}${"handler".padStart(22)}`,
  );
  for (const bundle of bundles) {
    const rows = { spare: [] as number[], cold: [] as number[], handler: [] as number[] };
    for (const spare of [true, false]) {
      const pool = new IsolatePool({ spare });
      pool.load(bundle.hash, bundle.code, limits);
      for (let i = 0; i < ROUNDS; i++) {
        const tenantId = TenantId.parse(`t${i}`);
        // Wait for the spares to be back: this column is a cold call that finds one ready.
        while (spare && pool.stats().spares < SPARES_PER_KIND) await new Promise((resolve) => setTimeout(resolve, 1));
        const r = pool.call(bundle.hash, {
          tenantId,
          point: "tool.call",
          eventJson,
          ctxJson: "{}",
          timeoutMs: 10_000,
        });
        if (r.type !== "replied") throw new Error(`${bundle.name}: ${r.failure.code} ${r.failure.message}`);
        (spare ? rows.spare : rows.cold).push(r.loadMs ?? 0);
        if (!spare) rows.handler.push(r.runMs);
        pool.unload(bundle.hash);
        pool.load(bundle.hash, bundle.code, limits);
      }
      pool.dispose();
    }
    console.log(
      `${bundle.name.padEnd(28)}${stats(rows.spare).padStart(22)}${stats(rows.cold).padStart(22)}${stats(rows.handler).padStart(22)}`,
    );
  }
  console.log("");
  if (typical !== undefined) await inWorker(typical.code);
} finally {
  for (const hog of hogs) hog.kill();
}
