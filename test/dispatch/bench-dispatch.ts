/**
 * Dispatch overhead per hook call (a script, not a test; figures for the README):
 *   node --no-node-snapshot --import tsx test/dispatch/bench-dispatch.ts
 * An executor that answers instantly with a canned reply takes the sandbox out of the picture, so the
 * figures are the host-side cost of one `tool.call`: ctx and event JSON, reply parse and validation
 * (invokeHook), stacking, record and provenance event. The cases run interleaved, round by round, and
 * the median round is printed, so load from other processes hits them alike.
 */
import { performance } from "node:perf_hooks";
import { createDispatcher, invokeHook } from "../../src/dispatch/index.js";
import { DEFAULT_LIMITS, type HookExecutor } from "../../src/protocol/index.js";
import { bundleOf, HASH, RUN, returned, TENANT, toolCallEvent } from "./helpers.js";

const ROUNDS = 9;
const PER_ROUND = 20_000;
const canned = returned({ type: "rewrite", args: { path: "/tmp/safe", limit: 10 } });
const executor: HookExecutor = {
  mode: "inline",
  execute: async () => canned,
  describe: async () => {
    throw new Error("unused");
  },
  close: async () => {},
};
const event = toolCallEvent({ path: "/etc/passwd", command: "cat /etc/passwd | head -n 20", env: { LANG: "C" } });
const unlimited = { turnMs: 3_600_000, runMs: 86_400_000 };

const sandboxBundle = { hash: HASH, code: "" };
const call = { tenantId: TENANT, point: "tool.call" as const, ctxJson: "{}", timeoutMs: DEFAULT_LIMITS.timeoutMs };
const tenantRun = createDispatcher({ executor, budgets: unlimited, emit: () => {} }).openRun({
  tenantId: TENANT,
  runId: RUN,
  bundle: bundleOf(["tool.call"]),
});
const platform = createDispatcher({ executor, emit: () => {} });
platform.registerPlatformHooks({ id: "p", position: "first", hooks: { toolCall: () => undefined } });
const platformRun = platform.openRun({ tenantId: TENANT, runId: RUN });
const skipRun = createDispatcher({ executor }).openRun({
  tenantId: TENANT,
  runId: RUN,
  bundle: bundleOf(["turn.end"]),
});

const cases: [string, () => Promise<unknown>][] = [
  [
    "invokeHook alone (stringify event + parse reply)",
    () => invokeHook(executor, sandboxBundle, { ...call, eventJson: JSON.stringify(event) }, DEFAULT_LIMITS),
  ],
  ["dispatcher, tenant bundle", () => tenantRun.dispatch("tool.call", event)],
  ["dispatcher, one platform hook, no bundle", () => platformRun.dispatch("tool.call", event)],
  ["dispatcher, point not exported", () => skipRun.dispatch("tool.call", event)],
];

const samples = cases.map((): number[] => []);
for (let round = -1; round < ROUNDS; round++) {
  for (const [i, [, fn]] of cases.entries()) {
    const start = performance.now();
    for (let n = 0; n < PER_ROUND; n++) await fn();
    if (round >= 0) samples[i]?.push(((performance.now() - start) * 1000) / PER_ROUND);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const medians = samples.map(median);
for (const [i, [label]] of cases.entries()) console.log(`${label.padEnd(52)} ${medians[i]?.toFixed(2)} µs/call`);
console.log(`dispatcher overhead beyond invokeHook: ${((medians[1] ?? 0) - (medians[0] ?? 0)).toFixed(2)} µs/call`);
