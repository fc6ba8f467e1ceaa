/**
 * Item 6 of issue 16: `WebAssembly.compile` work that could outlive a call or escape its cpuTime. V8 (as
 * isolated-vm 5.0.4 embeds it) compiles wasm lazily: a 12 MB module is validated within the call (charged),
 * and a compile the hook does not await leaves no work running after the call; one it awaits can never
 * finish, because its result is delivered by a task the sandbox never runs, so the call ends `pending`
 * (a quarantine strike). Measured in the inline executor, where the isolate's threads are this process's.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createInlineExecutor } from "../../sandbox/worker/index.js";
import { invokeHook } from "../../src/dispatch/index.js";
import { Limits } from "../../src/protocol/index.js";
import { HEALTHY, hookCall, hooksBundle, tenant } from "../sandbox/bundle-fixtures.js";

/** `bigModule(functions, ops)`: a module of `functions` functions of `ops` (i32.const 0; drop) pairs each. */
const MAKE_MODULE = `
function leb(n) { const out = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; }
function section(id, bytes) { return [id, ...leb(bytes.length), ...bytes]; }
function bigModule(functions, ops) {
  const body = new Uint8Array(ops * 3 + 2);
  for (let i = 0; i < ops; i++) body.set([0x41, 0, 0x1a], 1 + i * 3);
  body[body.length - 1] = 0x0b;
  const head = [0, 97, 115, 109, 1, 0, 0, 0, ...section(1, [1, 0x60, 0, 0]), ...section(3, [...leb(functions), ...new Array(functions).fill(0)])];
  const size = leb(body.length);
  const codeLength = leb(functions).length + functions * (size.length + body.length);
  const out = new Uint8Array(head.length + 1 + leb(codeLength).length + codeLength);
  out.set(head);
  let o = head.length;
  for (const b of [10, ...leb(codeLength), ...leb(functions)]) out[o++] = b;
  for (let f = 0; f < functions; f++) { out.set(size, o); o += size.length; out.set(body, o); o += body.length; }
  return out;
}
`;
const MODULE = "bigModule(2000, 2000)"; // 12 MB of code

const limits = Limits.parse({ timeoutMs: 2_000, memoryMb: 128 });
// No spare isolates: preparing them after the first load is the sandbox's own background work (tens of ms
// of this process's CPU in the next second), which would hide the tenant's.
const executor = createInlineExecutor({ limits, quiet: true, pool: { spare: false } });
afterAll(() => executor.close());

const cpuMsOfProcess = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

describe("WebAssembly.compile in a hook", () => {
  it("leaves no compile work running after a call that does not await it", async () => {
    const bundle = hooksBundle(
      `{ toolCall() { WebAssembly.compile(${MODULE}).then((m) => { globalThis.kept = m; }); return { type: "block", reason: "started" }; } }`,
      MAKE_MODULE,
    );
    const { outcome } = await invokeHook(executor, ...hookCall(tenant("wasm-spawner"), bundle), limits);
    expect(outcome).toMatchObject({ type: "decided", result: { type: "block", reason: "started" } });
    const before = cpuMsOfProcess();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // Idle, this process uses a few ms a second; background compilation of 12 MB would use hundreds.
    expect(cpuMsOfProcess() - before).toBeLessThan(100);
    const started = performance.now();
    const neighbour = await invokeHook(executor, ...hookCall(tenant("neighbour"), HEALTHY), limits);
    expect(neighbour.outcome).toMatchObject({ type: "decided" });
    expect(performance.now() - started).toBeLessThan(500);
  });

  it("ends a call that awaits it as pending, which counts towards quarantine", async () => {
    const bundle = hooksBundle(
      `{ async toolCall() { const m = await WebAssembly.compile(${MODULE}); return { type: "block", reason: String(m) }; } }`,
      MAKE_MODULE,
    );
    const { outcome, cost } = await invokeHook(executor, ...hookCall(tenant("wasm-waiter"), bundle), limits);
    expect(outcome).toMatchObject({ type: "failed", failure: { code: "pending" } });
    // Building and validating the module ran inside the call, on its clock.
    expect(cost.cpuMs).toBeGreaterThan(1);
  });
});
