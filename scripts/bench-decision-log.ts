/**
 * Hook-call overhead of the decision log: the same `tool.call` through the dispatcher with the tenant's
 * log off and on at 100 % (sample 1, no mask), side by side in one run, for three executors: a canned
 * reply (the host-side cost alone, the harshest ratio), the inline sandbox (isolated-vm in this process)
 * and the process sandbox (one worker). The writer runs while the calls are timed: it serialises on the
 * event loop and the store inserts (SQLite: on the store's append thread; PostgreSQL: in the server, another
 * process). What is still unwritten at the end of a span (a batch in flight, a part batch waiting
 * `flushMs`) is flushed after it, untimed, and its largest share is printed. Off and on run back to back in
 * each round, in alternating order; the ratio printed is the median of the rounds' ratios, so load from
 * other processes that drifts between rounds hits both sides of a pair alike. Host CPU is this process's
 * (its threads included, not the sandbox worker's or the PostgreSQL server's). The store is a fresh SQLite file, or the PostgreSQL URL in
 * ISOHOOK_BENCH_STORE (a scratch schema, dropped afterwards).
 *   node --no-node-snapshot --import tsx scripts/bench-decision-log.ts
 *   ISOHOOK_BENCH_STORE=postgres://root@127.0.0.1:5432/test node --no-node-snapshot --import tsx scripts/bench-decision-log.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { createHookExecutor } from "../sandbox/supervisor/index.js";
import { DecisionLog } from "../src/decisionlog/index.js";
import { createDispatcher } from "../src/dispatch/index.js";
import { deployHook } from "../src/gate/index.js";
import { type HookExecutor, RunId, TenantId } from "../src/protocol/index.js";
import { type BundleStore, PostgresBundleStore, SqliteBundleStore } from "../src/store/index.js";

const ROUNDS = 7;
/** Issue 10: a hook call with the log on at 100 % within 10 % of the log off. */
const TARGET = 1.1;
const acme = TenantId.parse("acme");
const globex = TenantId.parse("globex");
const dir = mkdtempSync(join(tmpdir(), "isohook-bench-log-"));
const pgUrl = process.env.ISOHOOK_BENCH_STORE;
const schema = `bench_${process.pid}`;
const store: BundleStore =
  pgUrl === undefined
    ? await SqliteBundleStore.open(join(dir, "store.db"))
    : await PostgresBundleStore.open(`${pgUrl}?schema=${schema}`);
// Roomy limits for the gate only: on a loaded machine a cold fixture call can pass 50 ms.
const gateExecutor = await createHookExecutor({ workers: 1, spareWorker: false, limits: { timeoutMs: 1_000 } });
for (const tenantId of [acme, globex]) {
  const deployed = await deployHook({
    store,
    executor: gateExecutor,
    entry: "hooks/block-destructive-shell",
    tenantId,
    by: "bench",
    activate: true,
    fuzz: { runs: 5 },
    limits: { timeoutMs: 1_000 },
  });
  if (deployed.type !== "deployed") throw new Error("the gate rejected the bench hook");
}
await gateExecutor.close();
// acme is logged at 100 %, globex (the same bundle) is not: one log, one store, the two cases side by side.
await store.setLogSettings({
  tenantId: acme,
  settings: { sample: 1, mask: [], retainDays: 1, retain: 1_000_000 },
  by: "bench",
});
// A buffer that never fills: the figures are what every call costs when nothing is dropped.
const log = await DecisionLog.open(store, { bufferSize: 1_000_000, bufferChars: 2 ** 31 });
const canned: HookExecutor = {
  mode: "inline",
  execute: async () => ({
    type: "replied",
    reply: '{"kind":"returned","result":null,"logs":[]}',
    cpuMs: 0.01,
    runMs: 0.01,
  }),
  describe: async () => {
    throw new Error("unused");
  },
  close: async () => {},
};
const executors: [string, HookExecutor, number][] = [
  ["canned reply (host only)", canned, 20_000],
  ["inline sandbox", await createHookExecutor({ mode: "inline" }), 5_000],
  ["process sandbox", await createHookExecutor({ workers: 1, spareWorker: false }), 2_000],
];
const event = {
  call: { id: "c1", name: "shell", args: { command: "ls -la /workspace/build && du -sh dist", cwd: "/workspace" } },
  batch: { index: 0, size: 1 },
};
const unlimited = { turnMs: 3_600_000, runMs: 86_400_000 };

let runs = 0;
/** The largest share of a round's records still unwritten when its timed span ended (the writer's lag). */
let backlog = 0;
async function round(executor: HookExecutor, tenantId: TenantId, calls: number): Promise<Sample> {
  const dispatcher = createDispatcher({ executor, decisionLog: log, budgets: unlimited });
  const bundle = await store.active(tenantId);
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let done = 0; done < calls; done += 100) {
    const run = dispatcher.openRun({ tenantId, runId: RunId.parse(`run_${runs++}`), bundle });
    for (let n = 0; n < 100; n++) await run.dispatch("tool.call", event);
    // A run of 100 calls, then the event loop turns (a host's runs wait on models and tools): the canned
    // and inline executors answer in microtasks, and without this the writer could not run in the span.
    await new Promise((resolve) => setImmediate(resolve));
  }
  const wall = ((performance.now() - start) * 1000) / calls;
  const used = process.cpuUsage(cpu);
  if (tenantId === acme) backlog = Math.max(backlog, log.stats().pending / calls);
  await log.flush();
  return { wall, cpu: (used.user + used.system) / calls };
}

/** µs per call: wall time, and this process's CPU over the span (its threads: the SQLite writer's too). */
interface Sample {
  readonly wall: number;
  readonly cpu: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
console.log(
  `decision log overhead per tool.call, ${store.kind} store, ${ROUNDS} paired rounds, medians; on/off is the median of the rounds' ratios (off = globex, on = acme at 100 %)`,
);
for (const [label, executor, calls] of executors) {
  const off: Sample[] = [];
  const on: Sample[] = [];
  for (let r = -1; r < ROUNDS; r++) {
    // Which goes first alternates, so a drift in the machine's load favours neither.
    const offFirst = r % 2 === 0;
    const first = await round(executor, offFirst ? globex : acme, calls);
    const second = await round(executor, offFirst ? acme : globex, calls);
    if (r < 0) continue;
    off.push(offFirst ? first : second);
    on.push(offFirst ? second : first);
  }
  // The median of each round's on/off ratio: the pair ran back to back, under the same load.
  const ratio = median(on.map((x, i) => x.wall / (off[i]?.wall ?? Number.NaN)));
  const cpuRatio = median(on.map((x, i) => x.cpu / (off[i]?.cpu ?? Number.NaN)));
  const [w0, w1] = [median(off.map((x) => x.wall)), median(on.map((x) => x.wall))];
  const [c0, c1] = [median(off.map((x) => x.cpu)), median(on.map((x) => x.cpu))];
  // The target (issue 10) is for a hook call through a sandbox; the canned reply isolates the host's share.
  const target = executor === canned ? "" : ratio <= TARGET ? " · ≤ 10 %: met" : " · ≤ 10 %: missed";
  console.log(
    `${label.padEnd(26)} wall off ${w0.toFixed(1)} · on ${w1.toFixed(1)} µs · on/off ${ratio.toFixed(3)}${target} · ` +
      `host CPU off ${c0.toFixed(1)} · on ${c1.toFixed(1)} µs (${cpuRatio.toFixed(2)}×) · unwritten at a round's end ≤ ${(backlog * 100).toFixed(0)} %`,
  );
  backlog = 0;
  await executor.close();
}
const stats = log.stats();
console.log(`records written ${stats.written}, dropped ${stats.droppedFull + stats.droppedFailed}`);
await log.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
if (pgUrl !== undefined) {
  const client = new pg.Client(pgUrl);
  await client.connect();
  await client.query(`DROP SCHEMA "${schema}" CASCADE`);
  await client.end();
}
