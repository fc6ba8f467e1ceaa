/**
 * Noisy neighbours, measured side by side in one run: the wait (`queuedMs`) of a well-behaved tenant's calls
 * alone on its worker; during the first call of each of several new spinning tenants on the same shard
 * (nothing is known about a tenant's first call: the calls queued behind it move to another worker after
 * the hold slice, sandbox/supervisor/relief.ts); then beside a tenant that spins on every call (moved to
 * the long-call worker after its first); and the spinner's CPU and wall time at its stop against its
 * timeout. Prints the machine's load with the figures.
 *
 *   node --no-node-snapshot --import tsx scripts/bench-neighbours.ts
 */
import { loadavg } from "node:os";
import { startProcessExecutor } from "../sandbox/supervisor/create-executor.js";
import { TenantId } from "../src/protocol/index.js";
import { HEALTHY, hookCall, hooksBundle } from "../test/sandbox/bundle-fixtures.js";

const TIMEOUT_MS = 50;
const CALLS = 400;
/** New spinning tenants whose first call the neighbour's calls meet. */
const FIRSTS = 8;
const SPIN = hooksBundle("{ toolCall() { for (;;) {} } }");
const acme = TenantId.parse("acme");
const mallory = TenantId.parse("mallory");

const quantile = (xs: readonly number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(xs.length * q) - 1)] ?? Number.NaN;

async function main(): Promise<void> {
  const executor = await startProcessExecutor({ workers: 1, limits: { timeoutMs: TIMEOUT_MS } });
  const neighbour = async () => {
    const waits: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const r = await executor.execute(...hookCall(acme, HEALTHY, { timeoutMs: TIMEOUT_MS }));
      waits.push(r.queuedMs ?? 0);
    }
    return waits;
  };
  await neighbour();
  const alone = await neighbour();

  // Each new spinner's first call runs on the shared worker; the neighbour calls on until it is stopped.
  const duringFirst: number[] = [];
  for (let k = 0; k < FIRSTS; k++) {
    // With one shard the worker that takes held calls over is the spare, which the first spinner's move to
    // the long-call worker uses up: wait for its replacement to boot and warm up.
    while (!executor.workers().some((w) => w.slot === -1 && w.ready && w.pending === 0)) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const first = executor.execute(...hookCall(TenantId.parse(`first-${k}`), SPIN, { timeoutMs: TIMEOUT_MS }));
    let running = true;
    void first.finally(() => {
      running = false;
    });
    while (running) {
      const r = await executor.execute(...hookCall(acme, HEALTHY, { timeoutMs: TIMEOUT_MS }));
      duringFirst.push(r.queuedMs ?? 0);
    }
  }

  const stops: { cpuMs: number; runMs: number }[] = [];
  const spin = async () => {
    const r = await executor.execute(...hookCall(mallory, SPIN, { timeoutMs: TIMEOUT_MS }));
    if (r.type === "failed" && r.failure.code === "timeout") stops.push({ cpuMs: r.cpuMs, runMs: r.runMs });
  };
  // The spinner's first call runs on the shared worker; its calls move to the long-call worker after it.
  await spin();
  let spinning = true;
  const lanes = [0, 1].map(async () => {
    while (spinning) await spin();
  });
  const beside = await neighbour();
  spinning = false;
  await Promise.all(lanes);
  // A few more stops, one at a time, so the stop figures rest on more than the spins the neighbour phase saw.
  for (let i = 0; i < 10; i++) await spin();
  await executor.close();

  const load = loadavg()[0]?.toFixed(1);
  const p99Alone = quantile(alone, 0.99);
  const p99Beside = quantile(beside, 0.99);
  const added = p99Beside - p99Alone;
  const p99First = quantile(duringFirst, 0.99);
  const addedFirst = p99First - p99Alone;
  const cpu = stops.map((s) => s.cpuMs / TIMEOUT_MS);
  const wall = stops.map((s) => s.runMs / TIMEOUT_MS);
  console.log(`noisy neighbours (load ${load}, ${CALLS} neighbour calls each way, timeout ${TIMEOUT_MS} ms)`);
  console.log(`  neighbour wait p99 alone          ${p99Alone.toFixed(2)} ms (p50 ${quantile(alone, 0.5).toFixed(2)})`);
  console.log(
    `  neighbour wait p99 during ${FIRSTS} first spins ${p99First.toFixed(2)} ms (p50 ${quantile(duringFirst, 0.5).toFixed(2)}, ` +
      `max ${Math.max(...duringFirst).toFixed(2)}, ${duringFirst.length} calls)`,
  );
  console.log(`  added p99 wait, first spins       ${addedFirst.toFixed(2)} ms (target ≤ 5 ms)`);
  console.log(
    `  neighbour wait p99 beside spinner ${p99Beside.toFixed(2)} ms (p50 ${quantile(beside, 0.5).toFixed(2)})`,
  );
  console.log(`  added p99 wait, beside spinner    ${added.toFixed(2)} ms (target ≤ 5 ms)`);
  console.log(
    `  spinner at stop, ${stops.length} calls:   CPU p50 ${quantile(cpu, 0.5).toFixed(2)}× / max ${Math.max(...cpu).toFixed(2)}×, ` +
      `wall p50 ${quantile(wall, 0.5).toFixed(2)}× / max ${Math.max(...wall).toFixed(2)}× its timeout (target ≤ 1.1×)`,
  );
  if (addedFirst > 5) {
    console.log(
      "  miss: the added wait during first spins: a held call's neighbours move after the 2 ms slice plus the " +
        "host's timer, which a loaded machine runs late; next step: see docs/performance.md",
    );
  }
  if (added > 5) {
    console.log(
      "  miss: the added wait beside the spinner: a loaded machine delays the neighbour's worker behind the " +
        "long-call worker's spinning (they share the cores); next step: see docs/performance.md",
    );
  }
  if (quantile(cpu, 0.5) > 1.1) {
    console.log(
      "  miss: the spinner's stop: the CPU guard (sandbox/worker/cpu-guard.ts) polls the worker thread's CPU clock " +
        "every millisecond from a watcher thread, which a loaded machine runs late; measure on a quiet machine",
    );
  }
  console.log(
    "  (the wall time at stop is the CPU time stretched by the share of a core the worker gets: ≤ 1.1× needs a quiet machine)",
  );
}

await main();
