/**
 * What shadow mode costs a run (a script, not a test; figures for the README):
 *   node --no-node-snapshot --import tsx scripts/bench-shadow.ts
 * One process executor (1 worker, as a small host), the tenant's active bundle `block-destructive-shell`
 * and three set-ups side by side, interleaved round by round so load from other processes hits them alike:
 * no shadow; a well-behaved candidate (`coding-agent`) in shadow mode; a hostile one that spins to its
 * timeout on every call, before quarantine has seen it (a fresh dispatcher) and once it is quarantined
 * (5 timeouts in 60 s, the default). For each: the median latency of one `tool.call` as the run waits for it, and a
 * 1-turn run of 10 `tool.call`s. The shadow call is awaited before the run goes on, so its time is on the
 * run's critical path; its own turn budget (250 ms by default) bounds what a hostile candidate can add.
 */
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { createHookExecutor } from "../sandbox/supervisor/index.js";
import { buildBundle } from "../src/bundler/index.js";
import { createDispatcher } from "../src/dispatch/index.js";
import { type ActiveBundle, RunId, TenantId } from "../src/protocol/index.js";

const ROUNDS = 7;
const CALLS = 200;
const RUN_CALLS = 10;
const tenantId = TenantId.parse("acme");
const executor = await createHookExecutor({ workers: 1, spareWorker: false });
const active = await bundle("hooks/block-destructive-shell", 1, {});
const benign = await bundle("hooks/coding-agent", 2, { workdir: "/workspace" }, "hooks");
const hostile = await bundle("test/fixtures/shadow/spins", 3, {});
const shared = createDispatcher({ executor, emit: () => {} });
const event = (i: number) => ({
  call: { id: `c${i}`, name: "shell", args: { command: `ls build/${i}`, cwd: "/workspace" } },
  batch: { index: 0, size: 1 },
});

async function bundle(entry: string, version: number, config: object, root?: string): Promise<ActiveBundle> {
  const built = await buildBundle(entry, { executor, ...(root === undefined ? {} : { root }) });
  return { tenantId, version, code: built.code, manifest: built.manifest, config: config as ActiveBundle["config"] };
}

/** [name, what the store serves, whether each measure gets a fresh dispatcher (a quarantine book that never saw the candidate)] */
const setups: [string, ActiveBundle, boolean][] = [
  ["no shadow", active, false],
  ["well-behaved candidate in shadow mode", { ...active, shadow: benign }, false],
  ["hostile candidate, not yet quarantined", { ...active, shadow: hostile }, true],
  ["hostile candidate, quarantined", { ...active, shadow: hostile }, false],
];

let runs = 0;
/** Median µs of one tool.call (a fresh run per 20 calls, so a hostile shadow's budget is fresh too). */
async function perCall(served: ActiveBundle, fresh: boolean): Promise<number> {
  const dispatcher = fresh ? createDispatcher({ executor, emit: () => {} }) : shared;
  const times: number[] = [];
  let run = dispatcher.openRun({ tenantId, runId: RunId.parse(`run_${runs++}`), bundle: served });
  for (let i = 0; i < CALLS; i++) {
    if (i % 20 === 0) run = dispatcher.openRun({ tenantId, runId: RunId.parse(`run_${runs++}`), bundle: served });
    const start = performance.now();
    await run.dispatch("tool.call", event(i));
    times.push((performance.now() - start) * 1000);
  }
  return median(times);
}

/** Wall ms of a 1-turn run of RUN_CALLS tool.calls. */
async function perRun(served: ActiveBundle, fresh: boolean): Promise<number> {
  const dispatcher = fresh ? createDispatcher({ executor, emit: () => {} }) : shared;
  const run = dispatcher.openRun({ tenantId, runId: RunId.parse(`run_${runs++}`), bundle: served });
  run.beginTurn(1);
  const start = performance.now();
  for (let i = 0; i < RUN_CALLS; i++) await run.dispatch("tool.call", event(i));
  return performance.now() - start;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

// Warm every bundle's isolate first.
for (const [, served] of setups) await perCall(served, false);
const calls = setups.map((): number[] => []);
const runsMs = setups.map((): number[] => []);
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, [, served, fresh]] of setups.entries()) {
    calls[i]?.push(await perCall(served, fresh));
    runsMs[i]?.push(await perRun(served, fresh));
  }
}
const base = median(calls[0] ?? []);
const baseRun = median(runsMs[0] ?? []);
console.log(`shadow mode, 1 worker, median of ${ROUNDS} rounds (load average ${loadAverage()})`);
for (const [i, [name]] of setups.entries()) {
  const call = median(calls[i] ?? []);
  const run = median(runsMs[i] ?? []);
  console.log(
    `  ${name.padEnd(48)} tool.call ${call.toFixed(0).padStart(6)} µs (${(call / base).toFixed(2)}×)` +
      `   run of ${RUN_CALLS} calls ${run.toFixed(1).padStart(7)} ms (${(run / baseRun).toFixed(2)}×)`,
  );
}
await executor.close();

function loadAverage(): string {
  return loadavg()
    .map((n) => n.toFixed(1))
    .join(" ");
}
