import { afterAll, describe, expect, it } from "vitest";
import { IsolatePool } from "../../../sandbox/worker/index.js";
import type { SandboxBundle, SandboxResult } from "../../../src/protocol/index.js";
import { HEALTHY, hookCall, hooksBundle, POOL_LIMITS, tenant } from "../bundle-fixtures.js";

/**
 * Hostile tenants against the CPU guard (sandbox/worker/cpu-guard.ts), which stops a call by disposing its
 * isolate from isolated-vm's thread pool once the thread's CPU time reaches the timeout: code that tries to
 * outlive the stop (a `finally` that spins again, a spin after an `await` in the second crossing, a spin in
 * `toJSON` while the prelude serialises the result) still ends `timeout` at its CPU limit, and the
 * tenant's next call and a neighbour's run as usual.
 */

const TIMEOUT_MS = 40;
const pool = new IsolatePool();
afterAll(() => pool.dispose());

const HOSTILE: Record<string, string> = {
  "spins again in finally": "{ toolCall() { try { for (;;) {} } finally { for (;;) {} } } }",
  "spins after an await": "{ async toolCall() { await null; for (;;) {} } }",
  "spins in toJSON of its result": `{ toolCall() { return { type: "block", reason: { toJSON() { for (;;) {} } } }; } }`,
  "catches and spins on": "{ toolCall() { for (;;) { try { for (;;) {} } catch {} } } }",
};

function call(bundle: SandboxBundle, name: string): SandboxResult {
  const [, sandboxCall] = hookCall(tenant(name), bundle, { timeoutMs: TIMEOUT_MS });
  if (!pool.isLoaded(bundle.hash)) pool.load(bundle.hash, bundle.code, POOL_LIMITS);
  return pool.call(bundle.hash, sandboxCall);
}

const byCpu = (r: SandboxResult) => r.type === "failed" && r.failure.message.endsWith("(CPU time)");

describe("the CPU guard against hostile tenants", () => {
  for (const [name, hooks] of Object.entries(HOSTILE)) {
    it(`stops a hook that ${name} at its CPU limit, and the next calls run`, async () => {
      const bundle = hooksBundle(hooks);
      let result = call(bundle, "spinner");
      // The guard's threads start with the first pool of the process: a spin before that meets the backstop.
      for (let i = 0; i < 8 && !(byCpu(result) && result.cpuMs < TIMEOUT_MS * 1.5); i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        result = call(bundle, "spinner");
      }
      expect(result).toMatchObject({ type: "failed", failure: { code: "timeout" } });
      expect(byCpu(result)).toBe(true);
      expect(result.cpuMs).toBeGreaterThanOrEqual(TIMEOUT_MS);
      // Before the backstop's least factor (1.5 ×), where it stops a spinner without the guard; on a quiet
      // machine the stop is within 1.1 × (scripts/bench-neighbours.ts), the slack is for a loaded one.
      expect(result.cpuMs).toBeLessThan(TIMEOUT_MS * 1.5);
      expect(call(HEALTHY, "neighbour")).toMatchObject({ type: "replied" });
      expect(call(bundle, "spinner")).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    });
  }

  it("leaves a call that waits without CPU to the wall-clock backstop", () => {
    const bundle = hooksBundle("{ toolCall() { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); } }");
    const result = call(bundle, "waiter");
    expect(result).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    expect(byCpu(result)).toBe(false);
    expect(result.cpuMs).toBeLessThan(TIMEOUT_MS);
    expect(call(HEALTHY, "neighbour")).toMatchObject({ type: "replied" });
  });
});
