/**
 * What an observe-only hook costs a run: the same 20-call run (one `read_file` call per turn, every call
 * decided by the tenant's `toolCall` in the sandbox) with and without an observer that spins its whole
 * timeout on every `tool.result`, side by side in one process, rounds alternating, one sandbox worker for
 * both tenants, default limits (50 ms), quarantine off (so the spinner spins on every call: the worst case).
 * Prints the median wall time of `runAgent` for each, and their ratio, at two model latencies: 100 ms a turn
 * (a fast hosted model) and 0 (a scripted model, no idle time between decisions at all). Rounds run in ABBA
 * order, each after the previous one's observers ended and a 100 ms pause (outside the timed span).
 *
 *   npm run bench:observe            # or: node --no-node-snapshot --import tsx scripts/observe-bench.ts [rounds]
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createHookExecutor } from "../sandbox/supervisor/index.js";
import { declaredTool, type Model, scriptedModel } from "../src/agent/index.js";
import type { HookRecord } from "../src/dispatch/index.js";
import { bundleFromEntry, createHookRuntime, fixedBundleSource } from "../src/runtime/index.js";

const CALLS = 20;
/** Rounds at 100 ms a turn; the short zero-latency runs get 4× as many (their noise is larger). */
const ROUNDS = Number(process.argv[2] ?? 8);

const DECIDE = `toolCall() { return undefined; },`;
const SOURCES = {
  plain: `import { defineHooks } from "isohook/hook-sdk";\nexport default defineHooks({ ${DECIDE} });\n`,
  observed: `import { defineHooks } from "isohook/hook-sdk";
export default defineHooks({ ${DECIDE} observe: { toolResult() { for (;;) {} } } });\n`,
};

const dir = await mkdtemp(join(tmpdir(), "isohook-observe-bench-"));
const executor = await createHookExecutor({ workers: 1, spareWorker: false });
try {
  for (const [name, source] of Object.entries(SOURCES)) {
    await writeFile(join(dir, `${name}.ts`), source);
  }
  const bundles = await Promise.all(
    Object.keys(SOURCES).map((name) => bundleFromEntry(join(dir, `${name}.ts`), { tenantId: name, executor })),
  );
  const observeRecords: HookRecord[] = [];
  const runtime = await createHookRuntime({
    executor,
    bundles: fixedBundleSource(bundles),
    dispatch: { quarantine: { failures: 1_000_000 } },
    onEvent: (event) => {
      if (event.type === "hook.called" && event.record.observe) observeRecords.push(event.record);
    },
  });
  const readFile = declaredTool({ name: "read_file", result: "contents" });

  const run = async (tenantId: string, latencyMs: number): Promise<number> => {
    const started = performance.now();
    const result = await runtime.runAgent({
      tenantId,
      input: "read the files",
      tools: [readFile],
      model: withLatency(
        scriptedModel([
          ...Array.from({ length: CALLS }, (_, i) => ({ toolCalls: [{ name: "read_file", args: { n: i } }] })),
          { text: "done" },
        ]),
        latencyMs,
      ),
      maxTurns: CALLS + 1,
    });
    const ms = performance.now() - started;
    if (result.stopReason !== "completed") throw new Error(`The ${tenantId} run ended ${result.stopReason}`);
    // The observer's backlog must not spill into the next round: wait for it outside the timed span, then
    // let the worker's scheduler credit recover, so neither side starts right after the spinner ran.
    await runtime.observersSettled();
    await sleep(100);
    return ms;
  };

  console.log(
    `${CALLS}-call run, rounds alternating (${ROUNDS} at 100 ms a turn, ${ROUNDS * 4} at 0); the observer spins its whole 50 ms timeout on every tool.result`,
  );
  console.log("model latency   without observer   with observer   ratio   observer calls (timed out)");
  for (const latencyMs of [100, 0]) {
    await run("plain", latencyMs);
    await run("observed", latencyMs);
    const plain: number[] = [];
    const observed: number[] = [];
    observeRecords.length = 0;
    const rounds = latencyMs === 0 ? ROUNDS * 4 : ROUNDS;
    // ABBA order: neither side always runs first.
    for (let round = 0; round < rounds; round++) {
      if (round % 2 === 0) {
        plain.push(await run("plain", latencyMs));
        observed.push(await run("observed", latencyMs));
      } else {
        observed.push(await run("observed", latencyMs));
        plain.push(await run("plain", latencyMs));
      }
    }
    const timedOut = observeRecords.filter(
      (r) => r.outcome.type === "failed" && r.outcome.failure.code === "timeout",
    ).length;
    const a = median(plain);
    const b = median(observed);
    console.log(
      `${`${latencyMs} ms/turn`.padEnd(16)}${`${a.toFixed(0)} ms`.padEnd(19)}${`${b.toFixed(0)} ms`.padEnd(16)}${`${(b / a).toFixed(2)}×`.padEnd(8)}${observeRecords.length} (${timedOut})`,
    );
  }
  await runtime.close();
} finally {
  await executor.close();
  await rm(dir, { recursive: true, force: true });
}

function withLatency(model: Model, latencyMs: number): Model {
  if (latencyMs === 0) return model;
  return {
    id: model.id,
    async complete(request, signal) {
      await sleep(latencyMs, undefined, { signal });
      return model.complete(request, signal);
    },
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}
