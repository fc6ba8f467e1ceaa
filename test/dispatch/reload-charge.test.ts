import { describe, expect, it } from "vitest";
import { chargedMs } from "../../src/dispatch/budget.js";
import { strikeOf, strikeWeight } from "../../src/dispatch/quarantine.js";
import { RunId, type SandboxCost, type SandboxResult } from "../../src/protocol/index.js";
import { bundleOf, HASH, TENANT, toolCallEvent } from "./helpers.js";
import { setup } from "./setup.js";

const THREW = { code: "threw" as const, message: "nobody listens" };
const cost = (extra: Partial<SandboxCost> = {}): SandboxCost => ({ cpuMs: 1, runMs: 2, ...extra });

/** What the isolate pool answers for a handler that leaves a rejected promise behind after a load. */
function burned(loadMs: number, own: boolean): SandboxResult {
  const result: SandboxResult = { type: "failed", failure: { ...THREW }, cpuMs: 1, runMs: 2, loadMs };
  if (own) result.loadAfterRecycle = true;
  return result;
}

describe("what a tenant is charged for a call", () => {
  it("charges the run time, and the load only when the tenant's own failure caused it", () => {
    expect(chargedMs(cost())).toBe(2);
    expect(chargedMs(cost({ loadMs: 900, queuedMs: 1_000 }))).toBe(2);
    expect(chargedMs(cost({ loadMs: 900, loadAfterRecycle: true, queuedMs: 1_000 }))).toBe(902);
  });

  it("strikes a quarantine kind of failure, never a bystander's", () => {
    expect(strikeOf({ code: "timeout", message: "m" }, cost({ cpuMs: 50, runMs: 50 }), 50)).toBe("timeout");
    expect(strikeOf({ code: "pending", message: "m" }, cost(), 50)).toBe("pending");
    expect(strikeOf(THREW, cost(), 50)).toBeUndefined();
    const bystander = { code: "sandbox_crashed" as const, message: "m", bystander: true as const };
    expect(strikeOf(bystander, cost({ loadMs: 900, loadAfterRecycle: true }), 50)).toBeUndefined();
  });

  it("strikes a timeout only when the call's CPU time reached the timeout, or it timed out loading", () => {
    const timeout = { code: "timeout" as const, message: "m" };
    expect(strikeOf(timeout, cost({ cpuMs: 250, runMs: 250 }), 50)).toBe("timeout");
    // Stopped by the wall-clock backstop having used little CPU: it waited, or the machine starved it.
    expect(strikeOf(timeout, cost({ cpuMs: 12, runMs: 250 }), 50)).toBeUndefined();
    expect(strikeOf(timeout, cost({ cpuMs: 0, runMs: 0, loadMs: 1_000 }), 50)).toBe("timeout");
    expect(strikeOf({ code: "pending", message: "m" }, cost({ cpuMs: 0 }), 50)).toBe("pending");
  });

  it("strikes a load the tenant caused as a timeout when it made the call outlast the call's timeout", () => {
    expect(strikeOf(THREW, cost({ loadMs: 900, loadAfterRecycle: true }), 50)).toBe("timeout");
    expect(strikeOf(undefined, cost({ loadMs: 49, runMs: 2, loadAfterRecycle: true }), 50)).toBe("timeout");
    expect(strikeOf(undefined, cost({ loadMs: 47, runMs: 2, loadAfterRecycle: true }), 50)).toBeUndefined();
  });

  it("does not strike a slow load that is not the tenant's doing (first load, eviction, restart)", () => {
    expect(strikeOf(THREW, cost({ loadMs: 990 }), 50)).toBeUndefined();
    expect(strikeOf(undefined, cost({ loadMs: 990 }), 50)).toBeUndefined();
  });

  it("takes one strike per call, its own failure's, when a reload also outlasted the timeout", () => {
    const bomb = { code: "memory_limit" as const, message: "m" };
    expect(strikeOf(bomb, cost({ runMs: 50, loadMs: 900, loadAfterRecycle: true }), 50)).toBe("memory_limit");
  });

  it("weighs a strike by the whole call timeouts a reload the tenant caused held the worker", () => {
    expect(strikeWeight(cost({ runMs: 50 }), 50)).toBe(1);
    expect(strikeWeight(cost({ runMs: 50, loadMs: 900 }), 50)).toBe(1);
    expect(strikeWeight(cost({ runMs: 2, loadMs: 900, loadAfterRecycle: true }), 50)).toBe(18);
    expect(strikeWeight(cost({ runMs: 2, loadMs: 49, loadAfterRecycle: true }), 50)).toBe(1);
    expect(strikeWeight(cost({ runMs: 2, loadMs: 100, loadAfterRecycle: true }), 50)).toBe(2);
  });

  it("counts a spinner's run once however far past its timeout the wall-clock backstop let it go", () => {
    // Idle machine: stopped at 1.5 × its timeout, then reloaded in 3 ms.
    expect(strikeWeight(cost({ cpuMs: 75, runMs: 75, loadMs: 3, loadAfterRecycle: true }), 50)).toBe(1);
    // Every core busy: the backstop held it 263 ms for 13 ms of CPU, after a reload stretched to 192 ms.
    const starved = cost({ cpuMs: 13, runMs: 263, loadMs: 192, loadAfterRecycle: true });
    expect(strikeWeight(starved, 50)).toBe(1);
    expect(strikeOf({ code: "timeout", message: "m" }, starved, 50)).toBe("timeout");
  });

  it("weighs a slow reload by the share of a core its run had, never less than the backstop allows for", () => {
    // The same 900 ms reload on a machine that gave the run half a core: half the weight.
    expect(strikeWeight(cost({ cpuMs: 20, runMs: 40, loadMs: 900, loadAfterRecycle: true }), 50)).toBe(9);
    // A run that waits instead of computing does not make its own slow reload free.
    const waited = cost({ cpuMs: 0, runMs: 100, loadMs: 900, loadAfterRecycle: true });
    expect(strikeWeight(waited, 50)).toBe(4);
  });
});

describe("a tenant that makes every call reload its bundle", () => {
  it("is quarantined at the first slow reload it caused, even with a fresh run and budget per call", async () => {
    const { dispatcher, executor, events } = setup({
      respond: (seen) => burned(900, seen !== executor.seen[0]),
      options: { quarantine: { failures: 5 } },
    });
    const bundle = bundleOf(["tool.call"]);
    const codes: string[] = [];
    for (let i = 0; i < 8; i++) {
      const run = dispatcher.openRun({ tenantId: TENANT, runId: RunId.parse(`burn-${i}`), bundle });
      const { records } = await run.dispatch("tool.call", toolCallEvent());
      codes.push(records[0]?.outcome.type === "failed" ? records[0].outcome.failure.code : "decided");
    }
    // The first load is not the tenant's doing; the second is, and 902 ms is 18 timeouts of 50 ms.
    expect(executor.seen).toHaveLength(2);
    expect(codes).toEqual(["threw", "threw", ...Array(6).fill("quarantined")]);
    expect(dispatcher.quarantinedUntil(TENANT, HASH)).toBeDefined();
    expect(events.find((e) => e.type === "quarantine.entered")).toMatchObject({ code: "timeout", strike: 1 });
  });

  it("counts a shorter reload it caused once per call timeout it took", async () => {
    const { run, dispatcher, executor } = setup({
      points: ["tool.call"],
      respond: () => burned(100, true),
      options: { quarantine: { failures: 5 }, budgets: { turnMs: 10_000, runMs: 10_000 } },
    });
    for (let i = 0; i < 5; i++) await run.dispatch("tool.call", toolCallEvent());
    // 102 ms is two timeouts of 50 ms: 2 + 2 + 2 reaches 5 on the third call.
    expect(executor.seen).toHaveLength(3);
    expect(dispatcher.quarantinedUntil(TENANT, HASH)).toBeDefined();
  });

  it("spends its own turn's budget on the reload, so the next call of the turn does not run", async () => {
    const { run, executor } = setup({
      points: ["tool.call"],
      respond: () => burned(300, true),
      options: { budgets: { turnMs: 250, runMs: 10_000 }, quarantine: { failures: 1_000 } },
    });
    run.beginTurn(0);
    await run.dispatch("tool.call", toolCallEvent());
    const denied = await run.dispatch("tool.call", toolCallEvent());
    expect(executor.seen).toHaveLength(1);
    expect(run.spent()).toEqual({ turnMs: 302, runMs: 302 });
    expect(denied.records[0]).toMatchObject({ outcome: { failure: { code: "timeout" } }, runMs: 0 });
  });

  it("neither charges nor strikes slow loads it did not cause", async () => {
    const { run, dispatcher, executor } = setup({
      points: ["tool.call"],
      respond: () => burned(900, false),
      options: { quarantine: { failures: 2 }, budgets: { turnMs: 250, runMs: 10_000 } },
    });
    for (let i = 0; i < 6; i++) await run.dispatch("tool.call", toolCallEvent());
    expect(executor.seen).toHaveLength(6);
    expect(run.spent().turnMs).toBe(12);
    expect(dispatcher.quarantinedUntil(TENANT, HASH)).toBeUndefined();
  });

  it("charges a quick reload it caused without striking it", async () => {
    const { run, dispatcher, executor } = setup({
      points: ["tool.call"],
      respond: () => burned(10, true),
      options: { quarantine: { failures: 1 } },
    });
    for (let i = 0; i < 3; i++) await run.dispatch("tool.call", toolCallEvent());
    expect(executor.seen).toHaveLength(3);
    expect(run.spent().runMs).toBe(36);
    expect(dispatcher.quarantinedUntil(TENANT, HASH)).toBeUndefined();
  });

  it("records the reload and whose doing it was on the hook's record", async () => {
    const { run } = setup({ points: ["tool.call"], respond: () => burned(120, true) });
    const { records } = await run.dispatch("tool.call", toolCallEvent());
    expect(records[0]).toMatchObject({ loadMs: 120, loadAfterRecycle: true, runMs: 2 });
  });
});
