import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invokeHook } from "../../src/dispatch/invoke-hook.js";
import {
  type HookExecutor,
  type HookOutcome,
  Limits,
  type LimitsInput,
  type SandboxBundle,
} from "../../src/protocol/index.js";
import { type BundleCall, HEALTHY, hookCall, hooksBundle, scriptBundle, tenant } from "./bundle-fixtures.js";

/** The limits every executor under contract is created with; expectations below depend on them. */
export const CONTRACT_LIMITS = {
  // A high ceiling so that only calls meant to time out do (they pass their own timeoutMs): a loaded
  // machine must not turn a memory bomb or a slow-but-finite call into a timeout.
  timeoutMs: 3_000,
  // Loading a bundle into a fresh isolate has its own bound; the slow loads below take 60–80 ms.
  loadTimeoutMs: 500,
  memoryMb: 16,
  maxResultChars: 4_096,
  maxStateChars: 1_024,
  maxLogLines: 5,
  maxLogChars: 512,
} satisfies LimitsInput;

const LIMITS = Limits.parse(CONTRACT_LIMITS);

/**
 * The behaviour every `HookExecutor` shares (src/protocol/executor.ts), run against one implementation:
 * `describeExecutorContract("inline", (limits) => createInlineExecutor({ limits, quiet: true }))`. The
 * factory is called once per suite with `CONTRACT_LIMITS`; the suite closes the executor at the end.
 */
export function describeExecutorContract(
  name: string,
  makeExecutor: (limits: LimitsInput) => HookExecutor | Promise<HookExecutor>,
): void {
  describe(`HookExecutor contract: ${name}`, () => {
    let executor: HookExecutor;
    beforeAll(async () => {
      executor = await makeExecutor(CONTRACT_LIMITS);
    });
    afterAll(async () => {
      await executor?.close();
    });

    const run = async (call: BundleCall): Promise<HookOutcome> => (await invokeHook(executor, ...call, LIMITS)).outcome;
    const decided = async (call: BundleCall) => {
      const outcome = await run(call);
      if (outcome.type !== "decided") throw new Error(`expected decided, got ${JSON.stringify(outcome)}`);
      return outcome;
    };
    const failedCode = async (call: BundleCall) => {
      const outcome = await run(call);
      return outcome.type === "failed" ? outcome.failure.code : `decided:${JSON.stringify(outcome.result)}`;
    };

    it("returns the handler's result as a decided outcome with the state it changed", async () => {
      const outcome = await decided(hookCall(tenant("alpha"), HEALTHY, { state: { calls: 41 } }));
      expect(outcome.result).toEqual({ type: "block", reason: "healthy:shell" });
      expect(outcome.state).toEqual({ calls: 42 });
      expect(outcome.logs).toEqual([]);
    });

    it("hands the handler the event and the ctx the host sent", async () => {
      const echo = hooksBundle(`{ toolCall(event, ctx) {
        return { type: "rewrite", args: { name: event.call.name, tenant: ctx.tenantId, turn: ctx.turn, config: ctx.config } };
      } }`);
      const outcome = await decided(hookCall(tenant("alpha"), echo, { config: { level: 3 } }));
      expect(outcome.result).toEqual({
        type: "rewrite",
        args: { name: "shell", tenant: "alpha", turn: 0, config: { level: 3 } },
      });
    });

    it("decides the no-op when the handler returns nothing or the bundle lacks the point", async () => {
      const quiet = hooksBundle("{ toolCall() {} }");
      expect((await decided(hookCall(tenant("alpha"), quiet))).result).toBeNull();
      expect(
        (await decided(hookCall(tenant("alpha"), quiet, { point: "run.end", event: runEnd() }))).result,
      ).toBeNull();
    });

    it("settles an async handler within the call", async () => {
      const slow = hooksBundle(`{ async toolCall(event, ctx) {
        for (let i = 0; i < 100; i++) await null;
        ctx.state.awaited = true;
        return { type: "block", reason: "after 100 awaits" };
      } }`);
      const outcome = await decided(hookCall(tenant("alpha"), slow));
      expect(outcome.result).toEqual({ type: "block", reason: "after 100 awaits" });
      expect(outcome.state).toEqual({ awaited: true });
    });

    it("fails a promise that never settles as pending", async () => {
      const stuck = hooksBundle("{ toolCall() { return new Promise(() => {}); } }");
      // No clock involved: pending is decided when the call's microtasks have drained.
      expect(await failedCode(hookCall(tenant("alpha"), stuck))).toBe("pending");
    });

    it("fails a throwing handler as threw, with its message and the logs so far", async () => {
      const thrower = hooksBundle(`{ toolCall() { console.log("before"); throw new TypeError("bad input"); } }`);
      const outcome = await run(hookCall(tenant("alpha"), thrower));
      expect(outcome).toMatchObject({ type: "failed", failure: { code: "threw" }, logs: ["before"] });
      expect(outcome.type === "failed" && outcome.failure.message).toContain("TypeError: bad input");
    });

    it("captures console output and caps it by lines with a marker", async () => {
      const chatty = hooksBundle(`{ toolCall() {
        console.log("one", 2, { three: 3 }); console.warn("careful");
        for (let i = 0; i < 100; i++) console.info("line", i);
      } }`);
      const outcome = await decided(hookCall(tenant("alpha"), chatty));
      expect(outcome.logs.slice(0, 2)).toEqual(['one 2 {"three":3}', "[warn] careful"]);
      expect(outcome.logs).toHaveLength(LIMITS.maxLogLines + 1);
      expect(outcome.logs.at(-1)).toMatch(/^\[97 more log line\(s\) dropped/);
    });

    it("stops an infinite loop as timeout and runs the tenant's next call", async () => {
      const looping = hooksBundle(
        "{ toolCall(event) { if (event.loop) for (;;) {} return { type: 'block', reason: 'fine' }; } }",
      );
      expect(await failedCode(hookCall(tenant("alpha"), looping, { event: { ...eventWith(), loop: true } }))).toBe(
        "timeout",
      );
      expect((await decided(hookCall(tenant("alpha"), looping))).result).toEqual({ type: "block", reason: "fine" });
    });

    it("honours a per-call timeout below the executor's", async () => {
      const looping = hooksBundle("{ toolCall() { for (;;) {} } }");
      const outcome = await invokeHook(executor, ...hookCall(tenant("alpha"), looping, { timeoutMs: 5 }), LIMITS);
      expect(outcome.outcome.type === "failed" && outcome.outcome.failure.code).toBe("timeout");
      expect(outcome.cost.runMs).toBeLessThan(LIMITS.timeoutMs);
    });

    it("stops a memory bomb as memory_limit and runs the tenant's next call", async () => {
      const bomb = hooksBundle(`{ toolCall(event) {
        if (event.bomb) { const a = []; for (;;) a.push(new Array(100000).fill(1.5)); }
        return { type: "block", reason: "fine" };
      } }`);
      expect(await failedCode(hookCall(tenant("alpha"), bomb, { event: { ...eventWith(), bomb: true } }))).toBe(
        "memory_limit",
      );
      expect((await decided(hookCall(tenant("alpha"), bomb))).result).toEqual({ type: "block", reason: "fine" });
    });

    it("fails an oversize result or state as result_too_large", async () => {
      const big = hooksBundle(`{ toolCall(event, ctx) {
        if (event.state) { ctx.state.blob = "s".repeat(${LIMITS.maxStateChars}); return; }
        return { type: "block", reason: "r".repeat(${LIMITS.maxResultChars}) };
      } }`);
      expect(await failedCode(hookCall(tenant("alpha"), big))).toBe("result_too_large");
      expect(await failedCode(hookCall(tenant("alpha"), big, { event: { ...eventWith(), state: true } }))).toBe(
        "result_too_large",
      );
    });

    it("fails a result the point does not accept as invalid_result", async () => {
      const wrong = hooksBundle(`{ toolCall() { return { type: "explode" }; } }`);
      expect(await failedCode(hookCall(tenant("alpha"), wrong))).toBe("invalid_result");
    });

    it("fails a bundle that throws while loading, or does not compile, as threw", async () => {
      const throwing = scriptBundle("throw new Error('top-level boom');");
      const broken = scriptBundle("var __isohook_bundle = {{;");
      const outcome = await run(hookCall(tenant("alpha"), throwing));
      expect(outcome.type === "failed" && outcome.failure).toMatchObject({ code: "threw" });
      expect(outcome.type === "failed" && outcome.failure.message).toContain("top-level boom");
      expect(await failedCode(hookCall(tenant("alpha"), broken))).toBe("threw");
    });

    it("loads a cold bundle under its load timeout, not under the call's timeout", async () => {
      const slowLoad = hooksBundle("{ toolCall() { return { type: 'block', reason: 'loaded' }; } }", SPIN_80_MS);
      const outcome = await run(hookCall(tenant("alpha"), slowLoad, { timeoutMs: 20 }));
      expect(outcome).toMatchObject({ type: "decided", result: { type: "block", reason: "loaded" } });
    });

    it("does not charge the isolate recreated after a timeout to the next call's timeout", async () => {
      const slowLoad = hooksBundle(
        "{ toolCall(event) { if (event.loop) for (;;) {} return { type: 'block', reason: 'fine' }; } }",
        SPIN_80_MS,
      );
      const alpha = tenant("alpha-reload");
      expect(
        await failedCode(hookCall(alpha, slowLoad, { event: { ...eventWith(), loop: true }, timeoutMs: 20 })),
      ).toBe("timeout");
      const next = await run(hookCall(alpha, slowLoad, { timeoutMs: 20 }));
      expect(next).toMatchObject({ type: "decided", result: { type: "block", reason: "fine" } });
    });

    it("fails a bundle whose top-level code outlasts the load timeout as timeout, saying so", async () => {
      const outcome = await run(hookCall(tenant("alpha"), scriptBundle("for (;;) {}")));
      expect(outcome.type === "failed" && outcome.failure.code).toBe("timeout");
      expect(outcome.type === "failed" && outcome.failure.message).toContain(
        `did not finish loading within its ${CONTRACT_LIMITS.loadTimeoutMs} ms load timeout; the hook was not called`,
      );
    });

    it("reports a cold call's load apart from its run time", async () => {
      const bundle = hooksBundle("{ toolCall() { return { type: 'block', reason: 'x' }; } }", SPIN_80_MS);
      const cold = await executor.execute(...hookCall(tenant("alpha-load"), bundle));
      const warm = await executor.execute(...hookCall(tenant("alpha-load"), bundle));
      expect(cold.type).toBe("replied");
      expect(cold.loadMs).toBeGreaterThanOrEqual(80);
      expect(warm.loadMs ?? 0).toBe(0);
    });

    it("keeps tenants apart: module state of one tenant is invisible to another", async () => {
      const counter = hooksBundle(
        `{ toolCall() { globalThis.seen = (globalThis.seen || 0) + 1; return { type: "block", reason: String(globalThis.seen) }; } }`,
      );
      const a = await decided(hookCall(tenant("alpha-counter"), counter));
      const b = await decided(hookCall(tenant("beta-counter"), counter));
      expect(a.result).toEqual({ type: "block", reason: "1" });
      expect(b.result).toEqual({ type: "block", reason: "1" });
    });

    it("settles many concurrent calls across tenants and bundles, each with its own result", async () => {
      const other = hooksBundle(`{ toolCall(event) { return { type: "block", reason: "other:" + event.call.id }; } }`);
      const calls = Array.from({ length: 30 }, (_, i) => {
        const bundle = i % 2 === 0 ? HEALTHY : other;
        const event = { call: { id: `c${i}`, name: `tool${i}`, args: {} }, batch: { index: 0, size: 1 } };
        return hookCall(tenant(`t${i % 3}`), bundle, { event });
      });
      const outcomes = await Promise.all(calls.map(run));
      outcomes.forEach((outcome, i) => {
        const reason = i % 2 === 0 ? `healthy:tool${i}` : `other:c${i}`;
        expect(outcome).toMatchObject({ type: "decided", result: { type: "block", reason } });
      });
    });

    it("reports CPU time and duration of each call", async () => {
      const executed = await executor.execute(...hookCall(tenant("alpha"), HEALTHY));
      expect(executed.type).toBe("replied");
      expect(executed.cpuMs).toBeGreaterThanOrEqual(0);
      expect(executed.runMs).toBeGreaterThanOrEqual(executed.type === "replied" ? 0 : 0);
      expect(Number.isFinite(executed.cpuMs) && Number.isFinite(executed.runMs)).toBe(true);
    });

    it("describes a bundle by the keys of its default export", async () => {
      const described = await executor.describe(tenant("alpha"), twoHandlers());
      expect(described).toMatchObject({ type: "described", handlers: ["toolCall", "turnEnd"] });
    });

    it("fails describe for a non-function export or a throwing bundle", async () => {
      const notFunction = await executor.describe(tenant("alpha"), hooksBundle("{ toolCall: 42 }"));
      expect(notFunction).toMatchObject({ type: "failed", failure: { code: "invalid_result" } });
      const throwing = await executor.describe(tenant("alpha"), scriptBundle("throw new Error('no')"));
      expect(throwing).toMatchObject({ type: "failed", failure: { code: "threw" } });
      const looping = await executor.describe(tenant("alpha"), scriptBundle("for (;;) {}"));
      expect(looping).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    });

    it("rejects a call whose signal is already aborted", async () => {
      const controller = new AbortController();
      controller.abort(new Error("caller gave up"));
      await expect(executor.execute(...hookCall(tenant("alpha"), HEALTHY), controller.signal)).rejects.toThrow(
        "caller gave up",
      );
    });

    it("rejects calls after close", async () => {
      const closing = await makeExecutor(CONTRACT_LIMITS);
      await closing.close();
      await expect(closing.execute(...hookCall(tenant("alpha"), HEALTHY))).rejects.toThrow();
      await closing.close();
    });
  });
}

/** Bundle top-level code that busy-waits 80 ms of wall time (Date.now is the guest's only clock). */
const SPIN_80_MS = "const until = Date.now() + 80; while (Date.now() < until) {}";

function eventWith() {
  return { call: { id: "c1", name: "shell", args: {} }, batch: { index: 0, size: 1 } };
}

function runEnd() {
  return { stopReason: "completed", turns: 1, usage: { inputTokens: 1, outputTokens: 1 } };
}

function twoHandlers(): SandboxBundle {
  return hooksBundle("{ toolCall() {}, turnEnd() {} }");
}
