/**
 * Probe: what entering another isolate than the last costs a call. Not a test; prints one line per count.
 * Run:
 *
 *   node --no-node-snapshot --import tsx scripts/probe-isolate-switch.ts [--rounds 7]
 *
 * The same ~1 KB `tool.call` hook, called round-robin over 1, 2, 4 and 32 isolates: by a raw isolated-vm
 * `applySync` (the floor) and by the inline executor (one tenant per isolate). The difference between 1 and
 * 32 is what a worker pays per call when many tenants take turns on it (`npm run bench`, 64 tenants): if
 * the inline executor adds no more than the raw call does, the cost is isolated-vm's and V8's own.
 */
import { createHash } from "node:crypto";
import { parseArgs } from "node:util";
import { createInlineExecutor } from "../sandbox/worker/index.js";
import * as ivm from "../sandbox/worker/isolated-vm.js";
import { BundleHash, type SandboxCall, TenantId } from "../src/protocol/index.js";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "7" } } });
const ROUNDS = Number(values.rounds);
const CALLS = 20_000;
const COUNTS = [1, 2, 4, 32];

const HOOK = `{ toolCall(event) {
  if (event.call.args.cwd !== "/workspace") return { type: "rewrite", args: { ...event.call.args, cwd: "/workspace" } };
} }`;
const CODE = `var __isohook_bundle = (() => ({ default: ${HOOK} }))();`;
const bundle = { hash: BundleHash.parse(`sha256-${createHash("sha256").update(CODE).digest("hex")}`), code: CODE };
const EVENT_JSON = JSON.stringify({
  call: { id: "call_1", name: "shell", args: { command: `ls -la ${"src/".repeat(200)}`, cwd: "/tmp" } },
  batch: { index: 0, size: 1 },
});
const ctxJsonOf = (tenant: string) =>
  JSON.stringify({
    tenantId: tenant,
    runId: "r",
    turn: 0,
    hookId: `tenant:${tenant}`,
    bundle: { version: 1, hash: bundle.hash },
    config: {},
    state: {},
  });

/** µs a call of `call(i)` for i = 0…CALLS-1, the median of ROUNDS rounds. */
async function perCall(call: (i: number) => unknown): Promise<number> {
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now();
    for (let i = 0; i < CALLS; i++) await call(i);
    rounds.push(((performance.now() - start) * 1000) / CALLS);
  }
  return rounds.sort((a, b) => a - b)[Math.floor(rounds.length / 2)] ?? Number.NaN;
}

function rawCall(): ivm.Reference {
  const context = new ivm.Isolate({ memoryLimit: 32 }).createContextSync();
  context.evalSync(`${CODE}
    globalThis.__call = (point, eventJson, ctxJson) =>
      JSON.stringify(__isohook_bundle.default.toolCall(JSON.parse(eventJson), JSON.parse(ctxJson)) ?? null);`);
  return context.global.getSync("__call", { reference: true });
}

const inline = createInlineExecutor({ quiet: true });
const ctxJson = ctxJsonOf("raw");
for (const count of COUNTS) {
  const raws = Array.from({ length: count }, rawCall);
  const calls: SandboxCall[] = Array.from({ length: count }, (_, k) => {
    const tenantId = TenantId.parse(`switch-${count}-${k}`);
    return { tenantId, point: "tool.call", eventJson: EVENT_JSON, ctxJson: ctxJsonOf(tenantId), timeoutMs: 1_000 };
  });
  for (const call of calls) await inline.execute(bundle, call);
  const rawUs = await perCall((i) =>
    raws[i % count]?.applySync(undefined, ["tool.call", EVENT_JSON, ctxJson], { timeout: 1_000 }),
  );
  const inlineUs = await perCall((i) => inline.execute(bundle, calls[i % count] as SandboxCall));
  console.log(
    `${String(count).padStart(2)} isolates round-robin: raw applySync ${rawUs.toFixed(2)} µs, inline execute ${inlineUs.toFixed(2)} µs a call`,
  );
}
await inline.close();
