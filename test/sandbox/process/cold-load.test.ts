import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcessExecutor } from "../../../sandbox/supervisor/create-executor.js";
import type { ProcessExecutor } from "../../../sandbox/supervisor/process-executor.js";
import { invokeHook } from "../../../src/dispatch/index.js";
import { Limits } from "../../../src/protocol/index.js";
import { hookCall, hooksBundle, scriptBundle, tenant } from "../bundle-fixtures.js";

/**
 * A cold call loads its bundle under the load timeout, and the host's deadline follows the phase the
 * worker marks: a slow load is not mistaken for a hung handler (killGraceMs here is far below the load).
 */
const limits = Limits.parse({ timeoutMs: 50, loadTimeoutMs: 1_500 });

describe("process executor: cold calls", () => {
  let executor: ProcessExecutor;
  beforeAll(async () => {
    executor = await startProcessExecutor({ workers: 1, spareWorker: false, killGraceMs: 100, limits });
  });
  afterAll(() => executor?.close());

  it("waits out a bundle that loads for longer than the call's timeout plus the kill grace", async () => {
    const pid = executor.workers()[0]?.pid;
    const slow = hooksBundle(
      "{ toolCall() { return { type: 'block', reason: 'loaded' }; } }",
      "const until = Date.now() + 400; while (Date.now() < until) {}",
    );
    const invoked = await invokeHook(executor, ...hookCall(tenant("slow-loader"), slow), limits);
    expect(invoked.outcome).toMatchObject({ type: "decided", result: { type: "block", reason: "loaded" } });
    expect(executor.workers()[0]?.pid).toBe(pid);
  });

  it("fails a load past the load timeout in the worker, which lives on", async () => {
    const pid = executor.workers()[0]?.pid;
    const { outcome } = await invokeHook(executor, ...hookCall(tenant("spinner"), scriptBundle("for (;;) {}")), limits);
    expect(outcome.type === "failed" && outcome.failure.code).toBe("timeout");
    expect(outcome.type === "failed" && outcome.failure.message).toContain(
      "did not finish loading within its 1500 ms load timeout; the hook was not called",
    );
    expect(executor.workers()[0]?.pid).toBe(pid);
  });
});
