import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcessExecutor } from "../../../sandbox/supervisor/create-executor.js";
import type { SupervisorEvent } from "../../../sandbox/supervisor/index.js";
import type { ProcessExecutor } from "../../../sandbox/supervisor/process-executor.js";
import type { SandboxResult, TenantId } from "../../../src/protocol/index.js";
import { eventually, STAND_IN_WORKER, standInCall, standInReply, tenantOn } from "./helpers/processes.js";

/**
 * Relief (sandbox/supervisor/relief.ts) with the stand-in worker: calls of other tenants held behind a long
 * call move to another worker after the slice, the held worker skips them, each call is answered once, a
 * tenant's own calls stay behind its call in order, and the long call is still the one blamed when its
 * worker is killed. Bounds on waits are loose (a long call here runs 150 ms or hangs): only whether the
 * calls waited behind it is asked, not how fast this shared machine moved them.
 */
describe("calls held behind a long call on one worker", () => {
  let executor: ProcessExecutor;
  const events: SupervisorEvent[] = [];
  let a: TenantId;
  let b: TenantId;
  let m: TenantId;

  beforeAll(async () => {
    executor = await startProcessExecutor(
      { workers: 2, killGraceMs: 300, onEvent: (e) => events.push(e) },
      { workerEntry: STAND_IN_WORKER },
    );
    a = tenantOn((id) => executor.shardOf(id), 0, "victim");
    b = tenantOn((id) => executor.shardOf(id), 0, "other");
    m = tenantOn((id) => executor.shardOf(id), 0, "mallory");
    expect(await eventually(() => executor.workers().every((w) => w.ready && w.pending === 0))).toBe(true);
  });
  afterAll(() => executor.close());

  const call = (tenant: TenantId, event: Record<string, unknown>, timeoutMs?: number) =>
    executor.execute(...standInCall(tenant, event, timeoutMs));

  it("moves other tenants' calls to another worker, where each is answered once, in its tenant's order", async () => {
    const held = standInReply(await call(m, {})).pid;
    const busy = call(m, { op: "busy", ms: 150 });
    const behind = await Promise.all([
      call(a, { nonce: 1 }),
      call(b, { nonce: 1 }),
      call(a, { nonce: 2 }),
      call(a, { nonce: 3 }),
    ]);
    expect(behind.map((r) => standInReply(r).nonce)).toEqual([1, 1, 2, 3]);
    expect(behind.every((r) => standInReply(r).pid !== held)).toBe(true);
    const served = behind.filter((r) => standInReply(r).pid === standInReply(behind[0] as SandboxResult).pid);
    // On the relief worker a's calls ran in the order a made them.
    const ofA = [behind[0], behind[2], behind[3]].map((r) => standInReply(r as SandboxResult).served);
    expect(ofA).toEqual([...ofA].sort((x, y) => x - y));
    expect(served.length).toBeGreaterThan(0);
    expect(Math.max(...behind.map((r) => r.queuedMs ?? 0))).toBeLessThan(100);
    expect(standInReply(await busy).pid).toBe(held);
  });

  it("skips on the held worker the calls it gave up, and keeps the holder's own calls behind it", async () => {
    const before = standInReply(await call(m, {}));
    const [busy, own, moved] = await Promise.all([
      call(m, { op: "busy", ms: 150 }),
      call(m, { nonce: "own" }),
      call(a, { nonce: "moved" }),
    ]);
    expect(standInReply(moved).pid).not.toBe(before.pid);
    expect(standInReply(own)).toMatchObject({ pid: before.pid, nonce: "own" });
    // The held worker ran m's two calls and then this one: a's call, given up, was skipped there.
    const after = standInReply(await call(m, {}));
    expect(after.pid).toBe(before.pid);
    expect(after.served - before.served).toBe(3);
    expect(standInReply(busy).pid).toBe(before.pid);
  });

  it("still blames and times out the hung call when its worker is killed; the calls moved off it are answered", async () => {
    const held = standInReply(await call(m, {})).pid;
    const [hung, moved] = await Promise.all([call(m, { op: "hang" }, 30), call(a, { nonce: "away" })]);
    expect(hung).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    expect(hung.type === "failed" && hung.failure.bystander).toBeUndefined();
    expect(standInReply(moved)).toMatchObject({ nonce: "away" });
    expect(standInReply(moved).pid).not.toBe(held);
    expect(events).toContainEqual(
      expect.objectContaining({ type: "worker_exited", pid: held, reason: "deadline", failedCalls: 1 }),
    );
  });
});

/**
 * With a long slice (200 ms), so that a second move, a slice after the first, shows in a wait: the tenants
 * moved off a held worker go to different free workers, so the one whose call runs long there holds no other.
 */
describe("tenants moved off a held worker", () => {
  const SLICE_MS = 200;
  let executor: ProcessExecutor;

  beforeAll(async () => {
    executor = await startProcessExecutor({ workers: 2 }, { workerEntry: STAND_IN_WORKER, holdSliceMs: SLICE_MS });
    expect(await eventually(() => executor.workers().every((w) => w.ready && w.pending === 0))).toBe(true);
  });
  afterAll(() => executor.close());

  it("are spread over the free workers: a moved call that runs long holds no other tenant's", async () => {
    const shard = (id: string) => executor.shardOf(id);
    const [m, a, b] = [tenantOn(shard, 0, "mallory"), tenantOn(shard, 0, "victim"), tenantOn(shard, 0, "other")];
    const call = (tenant: TenantId, event: Record<string, unknown>) =>
      executor.execute(...standInCall(tenant, event, 5_000));
    const held = standInReply(await call(m, {})).pid;
    const [busy, long, quick] = await Promise.all([
      call(m, { op: "busy", ms: 3 * SLICE_MS }),
      call(a, { op: "busy", ms: 3 * SLICE_MS }),
      call(b, { nonce: "quick" }),
    ]);
    const [longPid, quickPid] = [standInReply(long).pid, standInReply(quick).pid];
    expect([longPid, quickPid]).not.toContain(held);
    expect(standInReply(busy).pid).toBe(held);
    // Moved with a's call, b's would have waited a second slice behind it before moving again: 2 slices in all.
    expect(quick.queuedMs ?? 0).toBeLessThan(1.75 * SLICE_MS);
  });
});
