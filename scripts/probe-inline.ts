/**
 * Probe: what one inline isohook call costs next to a raw isolated-vm `applySync` running the same hook,
 * and next to a plain function. Not a test; prints a table. Run:
 *
 *   node --no-node-snapshot --import tsx scripts/probe-inline.ts [--rounds 15] [--calls 2000]
 *
 * Method: one small hook in two flavours — `noop` (inspects the command, returns nothing: the common case)
 * and `rewrite` (returns the ~1 KB args back: a result as large as the event) — and the same ~1 KB
 * `tool.call` event for every contender. Contenders alternate in rounds, forwards then backwards
 * (A B C D, D C B A, …), so machine noise and position effects hit all alike; the median per-call time
 * over rounds is reported. Timeouts are 1 s for every contender so a busy machine cannot fail a call. "raw applySync" is the floor of
 * the approach: one isolate, the bundle evaluated, and a guest function
 * `(eventJson, ctxJson) => JSON.stringify(hook(…))` called with `applySync(…, { timeout })` — no caps, no
 * logs, no state, no accounting.
 */
import { createHash } from "node:crypto";
import { parseArgs } from "node:util";
import { createInlineExecutor, IsolatePool } from "../sandbox/worker/index.js";
import * as ivm from "../sandbox/worker/isolated-vm.js";
import { BundleHash, DEFAULT_LIMITS, type SandboxCall, TenantId } from "../src/protocol/index.js";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "15" },
    calls: { type: "string", default: "2000" },
    flavour: { type: "string", default: "noop" },
  },
});
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);
const REWRITE = values.flavour === "rewrite";

function toolCall(event: { call: { args: Record<string, unknown> } }): unknown {
  const command = String(event.call.args.command ?? "");
  if (command.includes("rm -rf /")) return { type: "block", reason: "destructive shell command" };
  return REWRITE ? { type: "rewrite", args: { ...event.call.args, cwd: "/sandbox" } } : undefined;
}
const code = `var __isohook_bundle = (() => { const REWRITE = ${REWRITE}; return { default: { toolCall: (${toolCall.toString()}) } }; })();`;
const built = {
  code,
  hash: BundleHash.parse(`sha256-${createHash("sha256").update(code).digest("hex")}`),
  bytes: Buffer.byteLength(code),
};
const tenantId = TenantId.parse("probe");
const event = {
  call: { id: "call-1", name: "shell", args: { command: `ls -la /srv/app && grep -rn TODO src ${"x ".repeat(440)}` } },
  batch: { index: 0, size: 1 },
};
const eventJson = JSON.stringify(event);
const ctx = {
  tenantId,
  runId: "run-1",
  turn: 3,
  hookId: "tenant:probe",
  bundle: { version: 1, hash: built.hash },
  config: {},
  state: {},
};
const ctxJson = JSON.stringify(ctx);
const limits = { ...DEFAULT_LIMITS, timeoutMs: 1_000 };
const sandboxLimits = {
  memoryMb: limits.memoryMb,
  maxResultChars: limits.maxResultChars,
  maxStateChars: limits.maxStateChars,
  maxLogLines: limits.maxLogLines,
  maxLogChars: limits.maxLogChars,
};

// Raw: the bundle plus the thinnest possible dispatcher.
const rawIsolate = new ivm.Isolate({ memoryLimit: limits.memoryMb });
const rawContext = rawIsolate.createContextSync();
rawIsolate.compileScriptSync(`${built.code}\n;void 0;`).runSync(rawContext);
const rawCall = rawIsolate
  .compileScriptSync(
    "(function (e, c) { return JSON.stringify(__isohook_bundle.default.toolCall(JSON.parse(e), JSON.parse(c)) ?? null); })",
  )
  .runSync(rawContext, { reference: true });

const pool = new IsolatePool();
pool.load(built.hash, built.code, sandboxLimits);
const unguarded = new IsolatePool({ cpuGuard: false });
unguarded.load(built.hash, built.code, sandboxLimits);
const poolCall: SandboxCall = {
  tenantId,
  point: "tool.call",
  eventJson,
  ctxJson,
  timeoutMs: limits.timeoutMs,
};
const executor = createInlineExecutor({ limits: { timeoutMs: limits.timeoutMs }, quiet: true });
const sandboxBundle = { hash: built.hash, code: built.code };

const plain = (): unknown => JSON.stringify(toolCall(JSON.parse(eventJson)) ?? null);

const check = [
  rawCall.applySync(undefined, [eventJson, ctxJson], { timeout: limits.timeoutMs }),
  pool.call(built.hash, poolCall).type,
  (await executor.execute(sandboxBundle, poolCall)).type,
  plain(),
];
console.log("sanity:", JSON.stringify(check));

type Contender = { name: string; run: () => unknown | Promise<unknown> };
const contenders: Contender[] = [
  { name: "plain function (JSON in/out)", run: plain },
  {
    name: "raw isolated-vm applySync",
    run: () => rawCall.applySync(undefined, [eventJson, ctxJson], { timeout: limits.timeoutMs }),
  },
  { name: "IsolatePool.call (sync)", run: () => pool.call(built.hash, poolCall) },
  { name: "IsolatePool.call, no CPU guard", run: () => unguarded.call(built.hash, poolCall) },
  { name: "inline executor.execute", run: () => executor.execute(sandboxBundle, poolCall) },
];

const samples = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
for (let round = 0; round < ROUNDS + 1; round++) {
  for (const contender of round % 2 === 0 ? contenders : [...contenders].reverse()) {
    const started = performance.now();
    for (let i = 0; i < CALLS; i++) {
      const r = contender.run();
      if (r instanceof Promise) await r;
    }
    const perCallUs = ((performance.now() - started) * 1000) / CALLS;
    if (round > 0) samples.get(contender.name)?.push(perCallUs); // round 0 warms up
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};
const raw = median(samples.get("raw isolated-vm applySync") ?? []);
console.log(
  `\n${values.flavour} hook, ${CALLS} calls × ${ROUNDS} rounds, ${eventJson.length}-char event, median µs per call`,
);
console.log("| contender | µs/call | × raw applySync |");
console.log("|---|---:|---:|");
for (const contender of contenders) {
  const m = median(samples.get(contender.name) ?? []);
  console.log(`| ${contender.name} | ${m.toFixed(2)} | ${(m / raw).toFixed(2)} |`);
}

// Cold start: a new (tenant, bundle) in a running pool — with the prepared spare isolate the pool keeps
// (refilled when the pool is quiet), and without it (isolate creation and prelude install on the call's path).
const fresh = new IsolatePool({ spare: false });
fresh.load(built.hash, built.code, sandboxLimits);
const colds: number[] = [];
const freshColds: number[] = [];
for (let i = 0; i < 20; i++) {
  await new Promise((resolve) => setTimeout(resolve, 30)); // a running pool with a quiet moment between tenants
  colds.push(pool.call(built.hash, { ...poolCall, tenantId: TenantId.parse(`cold-${i}`) }).runMs);
  freshColds.push(fresh.call(built.hash, { ...poolCall, tenantId: TenantId.parse(`cold-${i}`) }).runMs);
}
fresh.dispose();
// Memory per warm isolate: heap of one tenant's isolate after some calls.
const heap = rawIsolate.getHeapStatisticsSync();
console.log(
  `\ncold first call, bundle ${built.bytes} B, median of 20: ${median(colds).toFixed(2)} ms with a spare isolate, ${median(freshColds).toFixed(2)} ms creating one`,
);
console.log(
  `warm isolate heap: used ${(heap.used_heap_size / 1024 / 1024).toFixed(2)} MB, total ${(heap.total_heap_size / 1024 / 1024).toFixed(2)} MB, external ${(heap.externally_allocated_size / 1024).toFixed(0)} KB`,
);
console.log(`pool: ${JSON.stringify(pool.stats())}`);

await executor.close();
pool.dispose();
rawIsolate.dispose();
