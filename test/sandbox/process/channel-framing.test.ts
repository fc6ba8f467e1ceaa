import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcessExecutor } from "../../../sandbox/supervisor/create-executor.js";
import type { SupervisorEvent } from "../../../sandbox/supervisor/index.js";
import type { ProcessExecutor } from "../../../sandbox/supervisor/process-executor.js";
import type { SandboxResult, TenantId } from "../../../src/protocol/index.js";
import { STAND_IN_WORKER, standInCall, standInReply, tenantOn } from "./helpers/processes.js";

/**
 * A worker is less trusted than its host: what it writes on the framed channel may be cut short, absurdly
 * long, garbage, split across reads, or written by something it left behind after it died. Each case
 * ends the way a crash does (the call running is the culprit, the calls behind it are re-sent) or is read
 * correctly; none gives any call a forged answer or stalls the host.
 */
describe("the framed channel with a hostile worker", () => {
  let executor: ProcessExecutor;
  const events: SupervisorEvent[] = [];
  let a: TenantId;
  let m: TenantId;

  beforeAll(async () => {
    executor = await startProcessExecutor(
      { workers: 1, spareWorker: true, killGraceMs: 5_000, onEvent: (e) => events.push(e) },
      { workerEntry: STAND_IN_WORKER },
    );
    a = tenantOn((id) => executor.shardOf(id), 0, "victim");
    m = tenantOn((id) => executor.shardOf(id), 0, "mallory");
  });
  afterAll(() => executor.close());

  async function pidOf(tenant: TenantId): Promise<number> {
    return standInReply(await executor.execute(...standInCall(tenant, {}))).pid;
  }

  /** Runs `op` as mallory's call with one of a's calls queued behind it; returns both outcomes. */
  async function attack(op: string): Promise<[SandboxResult, SandboxResult]> {
    const [hostile, queued] = await Promise.all([
      executor.execute(...standInCall(m, { op })),
      executor.execute(...standInCall(a, { nonce: `behind ${op}` })),
    ]);
    return [hostile, queued];
  }

  function exitOf(pid: number): SupervisorEvent | undefined {
    return events.find((e) => e.type === "worker_exited" && e.pid === pid);
  }

  for (const op of ["frame-oversized", "frame-garbage", "frame-bad-body"]) {
    it(`kills a worker that writes a broken frame (${op}) and blames the call it was running`, async () => {
      const before = await pidOf(a);
      const [hostile, queued] = await attack(op);
      expect(hostile).toMatchObject({ type: "failed", failure: { code: "sandbox_crashed" } });
      expect(hostile.type === "failed" && hostile.failure.bystander).toBeUndefined();
      expect(standInReply(queued)).toMatchObject({ nonce: `behind ${op}` });
      expect(standInReply(queued).pid).not.toBe(before);
      expect(exitOf(before)).toMatchObject({ reason: "protocol" });
    });
  }

  it("takes nothing from a frame cut short by the worker's death", async () => {
    const before = await pidOf(a);
    const [hostile, queued] = await attack("frame-truncated");
    // The half-written frame claimed ids 0–63 with forged replies: none may have been delivered.
    expect(hostile).toMatchObject({ type: "failed", failure: { code: "sandbox_crashed" } });
    expect(standInReply(queued)).toMatchObject({ nonce: "behind frame-truncated" });
    expect(exitOf(before)).toMatchObject({ reason: "crashed", exitCode: 70 });
  });

  it("reassembles a frame split across reads and keeps the worker", async () => {
    const before = await pidOf(a);
    const [split, queued] = await attack("frame-split");
    expect(standInReply(split).pid).toBe(before);
    expect(standInReply(queued)).toMatchObject({ nonce: "behind frame-split", pid: before });
    expect(exitOf(before)).toBeUndefined();
  });

  it("settles a dead worker's calls though a process it left behind holds the channel and writes forged answers", async () => {
    const before = await pidOf(a);
    const [hostile, queued] = await attack("frame-after-death");
    expect(hostile).toMatchObject({ type: "failed", failure: { code: "sandbox_crashed" } });
    expect(standInReply(queued)).toMatchObject({ nonce: "behind frame-after-death" });
    expect(standInReply(queued).pid).not.toBe(before);
    // The replacement serves on; no answer of the leftover writer reaches a call.
    const after = await Promise.all(
      Array.from({ length: 20 }, (_, i) => executor.execute(...standInCall(a, { nonce: i }))),
    );
    expect(after.map((o) => standInReply(o).nonce)).toEqual([...Array(20).keys()]);
    expect(exitOf(before)).toMatchObject({ reason: "crashed", signal: "SIGKILL" });
  });
});
