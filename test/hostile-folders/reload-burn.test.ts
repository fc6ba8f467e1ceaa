import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcessExecutor } from "../../sandbox/supervisor/create-executor.js";
import type { ProcessExecutor } from "../../sandbox/supervisor/process-executor.js";
import { createDispatcher, type Dispatched } from "../../src/dispatch/index.js";
import { DEFAULT_LIMITS, loadTimeoutOf, RunId, TenantId } from "../../src/protocol/index.js";
import { activeBundle, HEALTHY, hooksBundle } from "../sandbox/bundle-fixtures.js";
import { EVENT } from "./tenants.js";

/**
 * Top-level code that spins 0.9 s, inside the 1 s load timeout, and a handler that leaves a rejected
 * promise behind: every call ends `threw` and recycles the isolate, so the next call loads it again.
 */
const BURNER = hooksBundle(
  "{ toolCall() { Promise.reject(new Error('left behind')); return undefined; } }",
  "const until = Date.now() + 900; while (Date.now() < until) {}",
);
const BURNER_ID = TenantId.parse("burner");
const NEIGHBOUR_ID = TenantId.parse("neighbour");
/**
 * The first load is not the burner's doing; the second is, and 0.9 s is 18 timeouts of 50 ms, past the
 * default quarantine's 5: the third call does not run.
 */
const MAX_BURNS = 2;
/** What one call may hold a worker for at most: its load timeout, then the host's kill grace (1 s). */
const MAX_CALL_MS = loadTimeoutOf(DEFAULT_LIMITS) + 1_000;

function failureCode(dispatched: Dispatched<"tool.call">): string {
  const outcome = dispatched.records[0]?.outcome;
  return outcome?.type === "failed" ? outcome.failure.code : "decided";
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

describe("a tenant whose every call makes the worker reload its bundle", () => {
  let executor: ProcessExecutor;
  beforeAll(async () => {
    executor = await startProcessExecutor({ workers: 1, spareWorker: false });
  });
  afterAll(() => executor?.close());

  it("is quarantined at its first own reload, and its neighbour on the same worker keeps its latency after", async () => {
    const dispatcher = createDispatcher({ executor });
    const neighbour = dispatcher.openRun({
      tenantId: NEIGHBOUR_ID,
      runId: RunId.parse("neighbour-1"),
      bundle: activeBundle(NEIGHBOUR_ID, HEALTHY),
    });
    let turn = 0;
    /** One burner call (a fresh run each time: no run budget holds it back) beside one neighbour call. */
    const round = async () => {
      const burnRun = dispatcher.openRun({
        tenantId: BURNER_ID,
        runId: RunId.parse(`burn-${turn}`),
        bundle: activeBundle(BURNER_ID, BURNER),
      });
      neighbour.beginTurn(turn++);
      const started = performance.now();
      const [burn, next] = await Promise.all([
        burnRun.dispatch("tool.call", EVENT),
        neighbour.dispatch("tool.call", EVENT).then((d) => ({ d, ms: performance.now() - started })),
      ]);
      expect(next.d.decision).toMatchObject({ type: "block", reason: "healthy:shell" });
      return { burn, neighbour: next };
    };

    const burns: Dispatched<"tool.call">[] = [];
    const queuedBefore: number[] = [];
    for (let i = 0; i <= MAX_BURNS + 1; i++) {
      const { burn, neighbour: next } = await round();
      if (failureCode(burn) === "quarantined") break;
      burns.push(burn);
      queuedBefore.push(next.d.records[0]?.queuedMs ?? 0);
    }
    expect(dispatcher.quarantinedUntil(BURNER_ID, BURNER.hash)).toBeDefined();
    expect(burns.length).toBeLessThanOrEqual(MAX_BURNS);
    expect(burns.every((b) => ["threw", "timeout"].includes(failureCode(b)))).toBe(true);
    // Every load after the first was the burner's own doing, and the worker says so.
    expect(burns.slice(1).every((b) => b.records[0]?.loadAfterRecycle === true)).toBe(true);
    const burnedMs = burns.reduce((sum, b) => sum + (b.records[0]?.loadMs ?? 0) + (b.records[0]?.runMs ?? 0), 0);
    expect(burnedMs).toBeLessThanOrEqual(burns.length * MAX_CALL_MS);
    // The neighbour did wait behind the reloads while they ran (the hole this closes).
    expect(Math.max(...queuedBefore)).toBeGreaterThan(500);

    const after: number[] = [];
    for (let i = 0; i < 7; i++) {
      const { burn, neighbour: next } = await round();
      expect(failureCode(burn)).toBe("quarantined");
      after.push(next.ms);
    }
    expect(median(after)).toBeLessThan(200);
  });
});
