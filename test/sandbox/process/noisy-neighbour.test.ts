import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcessExecutor } from "../../../sandbox/supervisor/create-executor.js";
import type { ProcessExecutor } from "../../../sandbox/supervisor/process-executor.js";
import { TenantId } from "../../../src/protocol/index.js";
import { HEALTHY, hookCall, hooksBundle } from "../bundle-fixtures.js";
import { eventually } from "./helpers/processes.js";

/**
 * A spinning tenant on the same shard as a well-behaved one: once the spinner's first call has come back
 * long, its calls go to the long-call worker, and the neighbour's calls wait behind none of them. The
 * neighbour's wait (`queuedMs`) with the spinner is compared with its wait alone in the same run.
 */

const TIMEOUT_MS = 50;
const CALLS = 40;
const SPIN = hooksBundle("{ toolCall() { for (;;) {} } }");

let executor: ProcessExecutor;
beforeAll(async () => {
  executor = await startProcessExecutor({ workers: 1, limits: { timeoutMs: TIMEOUT_MS } });
});
afterAll(() => executor?.close());

const acme = TenantId.parse("acme");
const mallory = TenantId.parse("mallory");

async function neighbourWaits(): Promise<number[]> {
  const waits: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const result = await executor.execute(...hookCall(acme, HEALTHY, { timeoutMs: TIMEOUT_MS }));
    expect(result.type).toBe("replied");
    waits.push(result.queuedMs ?? 0);
  }
  return waits;
}

/** The `q` quantile; p90, not p99, of 40 calls: one call this shared machine starves must not decide the test. */
const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.ceil(values.length * q) - 1] ?? 0;

describe("a spinning tenant beside a well-behaved one on one shard", () => {
  it("does not hold the neighbour's calls once its first call came back long", async () => {
    expect(executor.shardOf(acme)).toBe(executor.shardOf(mallory));
    const alone = quantile(await neighbourWaits(), 0.9);

    const spin = () => executor.execute(...hookCall(mallory, SPIN, { timeoutMs: TIMEOUT_MS }));
    const first = await spin();
    expect(first).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    let spinning = true;
    const spins: Promise<void>[] = [];
    for (let lane = 0; lane < 2; lane++) {
      spins.push(
        (async () => {
          while (spinning) expect((await spin()).type).toBe("failed");
        })(),
      );
    }
    const beside = await neighbourWaits();
    spinning = false;
    await Promise.all(spins);

    // Behind a spinner the wait would be its backstop, 75–250 ms a call; the slack is for this shared machine.
    expect(quantile(beside, 0.9) - alone).toBeLessThan(TIMEOUT_MS);
    // The spinner's calls ran on a worker of their own: slot index `workers`.
    expect(executor.workers().some((w) => w.slot === 1)).toBe(true);
  }, 120_000);
});

/**
 * The spinner's FIRST call, before anything is known about it: the neighbour's calls already queued behind
 * it on the shard's worker, and those it makes while the spin runs, are taken over by another worker once
 * the spin has held them past the slice. The spinner's timeout is long (1 s) so that waiting behind it and
 * waiting a slice lie far apart even on a machine loaded past its cores.
 */
describe("a spinning tenant's first call", () => {
  const SPIN_TIMEOUT_MS = 1_000;
  let fresh: ProcessExecutor;
  beforeAll(async () => {
    fresh = await startProcessExecutor({ workers: 1, limits: { timeoutMs: SPIN_TIMEOUT_MS } });
    // With one shard the worker that takes the held calls over is the spare: wait until it has booted and
    // run its warm-up call.
    const spareIdle = () => fresh.workers().some((w) => w.slot === -1 && w.ready && w.pending === 0);
    expect(await eventually(spareIdle)).toBe(true);
  });
  afterAll(() => fresh?.close());

  it("holds the neighbour's calls no longer than a slice, and is still stopped and blamed", async () => {
    const call = () => fresh.execute(...hookCall(acme, HEALTHY, { timeoutMs: TIMEOUT_MS }));
    for (let i = 0; i < 5; i++) expect((await call()).type).toBe("replied");

    // Sent in the same tick: the neighbour's calls travel in the spinner's batch, behind its call.
    const spin = fresh.execute(...hookCall(mallory, SPIN, { timeoutMs: SPIN_TIMEOUT_MS }));
    const queued = [call(), call(), call()];
    let spinning = true;
    void spin.finally(() => {
      spinning = false;
    });
    const waits: number[] = [];
    for (const result of await Promise.all(queued)) {
      expect(result.type).toBe("replied");
      waits.push(result.queuedMs ?? 0);
    }
    while (spinning) {
      const result = await call();
      expect(result.type).toBe("replied");
      waits.push(result.queuedMs ?? 0);
    }
    const stopped = await spin;
    expect(stopped).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    expect(stopped.cpuMs).toBeGreaterThanOrEqual(SPIN_TIMEOUT_MS * 0.9);
    // Behind the spin the first three would wait its whole second of CPU; the slice is a few ms, and the
    // rest is slack for this shared machine.
    expect(Math.max(...waits)).toBeLessThan(SPIN_TIMEOUT_MS / 4);
    expect(waits.length).toBeGreaterThan(3);
  }, 60_000);
});
