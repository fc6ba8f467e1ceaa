import { type ChildProcess, spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcessExecutor } from "../../sandbox/supervisor/create-executor.js";
import type { ProcessExecutor } from "../../sandbox/supervisor/process-executor.js";
import { createDispatcher, type DispatchEvent, type HookRecord } from "../../src/dispatch/index.js";
import { RunId, TenantId } from "../../src/protocol/index.js";
import { activeBundle, hooksBundle } from "../sandbox/bundle-fixtures.js";

/**
 * Quarantine counts what the tenant did, not how busy the machine is: a hook that spins on every call is
 * quarantined at its 5th timeout (never sooner) with every core taken by two spinning processes, where the wall-clock
 * backstop holds each of its calls several timeouts long and each call after the first reloads its bundle.
 */

const TIMEOUT_MS = 50;
const TOOL_CALL = { call: { id: "c1", name: "shell", args: {} }, batch: { index: 0, size: 1 } };
const SPIN = hooksBundle("{ toolCall() { for (;;) {} } }");

let executor: ProcessExecutor;
let hogs: ChildProcess[] = [];

/** `count` processes spinning, each started (it printed) before this resolves. */
async function spinning(count: number): Promise<ChildProcess[]> {
  const started = Array.from({ length: count }, () =>
    spawn(process.execPath, ["-e", "process.stdout.write('x'); for (;;) {}"], { stdio: ["ignore", "pipe", "ignore"] }),
  );
  await Promise.all(started.map((hog) => new Promise((resolve) => hog.stdout?.once("data", resolve))));
  return started;
}

beforeAll(async () => {
  executor = await startProcessExecutor({ workers: 1, spareWorker: false, limits: { timeoutMs: TIMEOUT_MS } });
  hogs = await spinning(2 * availableParallelism());
});
afterAll(async () => {
  for (const hog of hogs) hog.kill("SIGKILL");
  await executor?.close();
});

describe("a spinning tenant on a machine whose every core is busy", () => {
  it("is quarantined after 5 timeouts, its runs past the timeout counted once each", async () => {
    const events: DispatchEvent[] = [];
    const dispatcher = createDispatcher({
      executor,
      limits: { timeoutMs: TIMEOUT_MS },
      budgets: { turnMs: 600_000, runMs: 600_000 },
      emit: (event) => events.push(event),
    });
    const tenantId = TenantId.parse("mallory");
    const timedOut: HookRecord[] = [];
    for (let i = 0; i < 12 && !events.some((e) => e.type === "quarantine.entered"); i++) {
      const run = dispatcher.openRun({
        tenantId,
        runId: RunId.parse(`spin-${i}`),
        bundle: activeBundle(tenantId, SPIN),
      });
      run.beginTurn(0);
      const [record] = (await run.dispatch("tool.call", TOOL_CALL)).records;
      if (record?.outcome.type === "failed" && record.outcome.failure.code === "timeout") timedOut.push(record);
    }
    const entered = events.find((e) => e.type === "quarantine.entered");
    expect(entered).toMatchObject({ type: "quarantine.entered", code: "timeout", tenantId });
    // Never sooner than 5 (counting the backstop's overshoot quarantined it at its 2nd); a call the machine
    // starved short of its CPU time strikes nothing, so on a host busier still one or two may not count.
    expect(timedOut.length).toBeGreaterThanOrEqual(5);
    expect(timedOut.length).toBeLessThanOrEqual(8);
    // The load held the calls past their timeout: counting their wall time (and the reload after each, when
    // the worker lived) would weigh more. On a machine busier still the host kills the worker over a call, and
    // the next call loads in a new worker, not after a recycle: the stretch shows in the run alone.
    const seen = JSON.stringify(
      timedOut.map((r) => ({ reload: r.loadAfterRecycle, loadMs: r.loadMs, runMs: r.runMs })),
    );
    const held = timedOut.filter(
      (r) => (r.loadAfterRecycle === true ? (r.loadMs ?? 0) : 0) + r.runMs >= 2 * TIMEOUT_MS,
    );
    expect(held.length, seen).toBeGreaterThan(0);
  });
});
