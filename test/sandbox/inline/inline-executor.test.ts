import { afterEach, describe, expect, it, vi } from "vitest";
import { ExecutorClosedError } from "../../../sandbox/supervisor/index.js";
import { createInlineExecutor, SandboxOptionsError } from "../../../sandbox/worker/index.js";
import { HEALTHY, hookCall, hooksBundle, tenant } from "../bundle-fixtures.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("createInlineExecutor", () => {
  it("warns once per process on stderr that it is for tests and benchmarks, unless quiet", async () => {
    const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const quiet = createInlineExecutor({ quiet: true });
    expect(write).not.toHaveBeenCalled();
    const first = createInlineExecutor();
    const second = createInlineExecutor();
    expect(write).toHaveBeenCalledTimes(1);
    expect(String(write.mock.calls[0]?.[0])).toMatch(/^isohook: inline executor .*tests and benchmarks only.*\n$/);
    await Promise.all([quiet.close(), first.close(), second.close()]);
  });

  it("validates its limits with a message naming the limit and the value", () => {
    expect(() => createInlineExecutor({ limits: { timeoutMs: 0 }, quiet: true })).toThrow(SandboxOptionsError);
    expect(() => createInlineExecutor({ limits: { memoryMb: 4 }, quiet: true })).toThrow(/`limits\.memoryMb`, got `4`/);
  });

  it("rejects after close with the same ExecutorClosedError class the process executor uses", async () => {
    const executor = createInlineExecutor({ quiet: true });
    await executor.close();
    const error = await executor.execute(...hookCall(tenant("a"), HEALTHY)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecutorClosedError);
    expect(error).toMatchObject({ code: "executor_closed" });
  });

  it("reports itself as inline mode", async () => {
    const executor = createInlineExecutor({ quiet: true });
    expect(executor.mode).toBe("inline");
    await executor.close();
  });

  it("fails an event over maxEventChars without entering the sandbox", async () => {
    const executor = createInlineExecutor({ limits: { maxEventChars: 1_024 }, quiet: true });
    const [bundle, call] = hookCall(tenant("a"), HEALTHY);
    expect(
      await executor.execute(bundle, { ...call, eventJson: JSON.stringify({ pad: "x".repeat(2_000) }) }),
    ).toMatchObject({
      type: "failed",
      failure: { code: "event_too_large" },
      cpuMs: 0,
    });
    await executor.close();
  });

  it("never raises a call's timeout above the executor's", async () => {
    const executor = createInlineExecutor({ limits: { timeoutMs: 20 }, quiet: true });
    const looping = hooksBundle("{ toolCall() { for (;;) {} } }");
    // 60 s asked, 20 ms granted: the call ends as a timeout long before the test's own deadline.
    const outcome = await executor.execute(...hookCall(tenant("a"), looping, { timeoutMs: 60_000 }));
    expect(outcome).toMatchObject({
      type: "failed",
      failure: { code: "timeout", message: expect.stringContaining("20 ms") },
    });
    await executor.close();
  });
});
