/**
 * The cost of a `model.stream` hook, side by side in one run: the same 1,000-token streamed reply (1,000
 * deltas of 4 characters, 1 ms apart, from the scripted model) through the process sandbox, for a tenant
 * whose bundle has a stream hook (hooks/stream-guard) and for one without any hook, alternating A B / B A.
 * Prints crossings and hook CPU per 1,000 streamed tokens, and the time to last token (the turn's start to
 * the last `model.delta`) with vs without the hook, as medians and their ratio; and the same with the hook
 * in hold mode (`streamWindow.hold`: a delta reaches `onEvent` once the hook let its window pass).
 *
 *   npm run bench:stream -- [rounds]
 */
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createHookExecutor } from "../sandbox/supervisor/index.js";
import { scriptedModel } from "../src/agent/index.js";
import { bundleFromEntry, createHookRuntime, fixedBundleSource, type RunEvent } from "../src/runtime/index.js";

const rounds = Number(process.argv[2] ?? 7);
const TOKENS = 1_000;
const REPO = fileURLToPath(new URL("..", import.meta.url));
const chunks = Array.from({ length: TOKENS }, (_, i) => `w${String(i % 100).padStart(2, "0")} `);

const executor = await createHookExecutor({ workers: 1 });
const guard = await bundleFromEntry(join(REPO, "hooks", "stream-guard"), { tenantId: "guarded", executor });
const runtime = await createHookRuntime({ executor, bundles: fixedBundleSource([guard]) });

interface Sample {
  readonly lastTokenMs: number;
  readonly crossings: number;
  readonly cpuMs: number;
}

async function once(tenantId: string, hold = false): Promise<Sample> {
  let lastDelta = 0;
  let crossings = 0;
  let cpuMs = 0;
  let started = 0;
  const onEvent = (event: RunEvent) => {
    if (event.type === "turn.started") started = performance.now();
    if (event.type === "model.delta") lastDelta = performance.now();
    if (event.type === "hooks.decided" && event.point === "model.stream") {
      crossings += 1;
      for (const record of event.records) cpuMs += record.cpuMs;
    }
  };
  const result = await runtime.runAgent({
    tenantId,
    input: "stream",
    model: scriptedModel([{ chunks, chunkMs: 1 }]),
    streamWindow: { hold },
    onEvent,
  });
  if (result.stopReason !== "completed") throw new Error(`${tenantId}: ${result.stopReason} ${result.reason}`);
  return { lastTokenMs: lastDelta - started, crossings, cpuMs };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const hooked: Sample[] = [];
const bare: Sample[] = [];
const held: Sample[] = [];
await once("guarded");
await once("bare");
await once("guarded", true);
for (let round = 0; round < rounds; round++) {
  if (round % 2 === 0) {
    hooked.push(await once("guarded"));
    bare.push(await once("bare"));
    held.push(await once("guarded", true));
  } else {
    held.push(await once("guarded", true));
    bare.push(await once("bare"));
    hooked.push(await once("guarded"));
  }
}
await runtime.close();
await executor.close();

const per1k = (n: number) => (n * 1_000) / TOKENS;
const withHook = median(hooked.map((s) => s.lastTokenMs));
const without = median(bare.map((s) => s.lastTokenMs));
console.log(
  `model.stream cost, ${TOKENS} streamed tokens per run, ${rounds} rounds (load ${loadavg()[0]?.toFixed(2)})`,
);
console.log(`  crossings per 1,000 tokens   ${per1k(median(hooked.map((s) => s.crossings))).toFixed(0)}`);
console.log(`  hook CPU per 1,000 tokens    ${per1k(median(hooked.map((s) => s.cpuMs))).toFixed(2)} ms`);
console.log(
  `  time to last token           ${withHook.toFixed(0)} ms with the stream hook, ${without.toFixed(0)} ms without`,
);
console.log(`  added time to last token     ${((withHook / without - 1) * 100).toFixed(1)} % (target ≤ 5 %)`);
const holding = median(held.map((s) => s.lastTokenMs));
console.log(
  `  hold mode                    ${holding.toFixed(0)} ms to the last released token, ${((holding / without - 1) * 100).toFixed(1)} % over no hook`,
);
