import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcessExecutor } from "../../sandbox/supervisor/create-executor.js";
import type { ProcessExecutor } from "../../sandbox/supervisor/process-executor.js";
import { createDispatcher } from "../../src/dispatch/index.js";
import { RunId, type SandboxCall, TenantId } from "../../src/protocol/index.js";
import { activeBundle, ctxJson, hooksBundle } from "../sandbox/bundle-fixtures.js";

/** A tenant id on the given shard (`shardOf`), so two tenants can be put on one worker. */
function tenantOn(executor: ProcessExecutor, shard: number, prefix: string): TenantId {
  for (let i = 0; ; i++) if (executor.shardOf(`${prefix}-${i}`) === shard) return TenantId.parse(`${prefix}-${i}`);
}

const TOOL_CALL = { call: { id: "c1", name: "shell", args: { command: "ls" } }, batch: { index: 0, size: 1 } };
const QUICK = hooksBundle(
  "{ toolCall(event) { return { type: 'rewrite', args: { ...event.call.args, cwd: '/w' } }; } }",
);
const SPIN = hooksBundle("{ toolCall() { for (;;) {} } }");

describe("tenants sharing a sandbox worker", () => {
  let executor: ProcessExecutor;
  beforeAll(async () => {
    // Relief off (holdSliceMs 0): the quick tenant's calls must queue behind the runaway, which relief would
    // move to the other worker (test/sandbox/process/relief.test.ts); this test is about what queueing costs.
    executor = await startProcessExecutor(
      { workers: 2, spareWorker: false, limits: { timeoutMs: 50 } },
      { holdSliceMs: 0 },
    );
  });
  afterAll(() => executor?.close());

  it("charges a tenant's budget only its own hook time, not time queued behind a neighbour's runaway hook", async () => {
    const shard = executor.shardOf("acme");
    const quick = tenantOn(executor, shard, "acme");
    const runaway = tenantOn(executor, shard, "mallory");
    const turnMs = 100;
    const dispatcher = createDispatcher({ executor, limits: { timeoutMs: 50 }, budgets: { turnMs, runMs: 10_000 } });
    const run = dispatcher.openRun({
      tenantId: quick,
      runId: RunId.parse("shared-1"),
      bundle: activeBundle(quick, QUICK),
    });
    run.beginTurn(0);
    expect((await run.dispatch("tool.call", TOOL_CALL)).decision.type).toBe("execute");

    // The neighbour keeps two calls that spin to their 50 ms timeout queued on the same worker meanwhile.
    const spin: SandboxCall = {
      tenantId: runaway,
      point: "tool.call",
      eventJson: JSON.stringify(TOOL_CALL),
      ctxJson: ctxJson(runaway, SPIN),
      timeoutMs: 50,
    };
    let done = false;
    const lane = async () => {
      while (!done) expect((await executor.execute(SPIN, spin)).type).toBe("failed");
    };
    const lanes = [lane(), lane()];
    run.beginTurn(1);
    const dispatched = [];
    for (let i = 0; i < 6; i++) dispatched.push(await run.dispatch("tool.call", TOOL_CALL));
    done = true;
    await Promise.all(lanes);

    expect(dispatched.map((d) => d.decision.type)).toEqual(Array(6).fill("execute"));
    expect(run.spent().turnMs).toBeLessThan(turnMs);
    // The calls did wait behind the runaway hook, longer in all than the turn's budget.
    const queued = dispatched.reduce((sum, d) => sum + (d.records[0]?.queuedMs ?? 0), 0);
    expect(queued).toBeGreaterThan(turnMs);
  });
});
