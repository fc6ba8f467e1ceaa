import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcessExecutor } from "../../../sandbox/supervisor/create-executor.js";
import type { SupervisorEvent } from "../../../sandbox/supervisor/index.js";
import type { ProcessExecutor } from "../../../sandbox/supervisor/process-executor.js";
import { BundleHash, type SandboxResult, TenantId } from "../../../src/protocol/index.js";
import {
  eventually,
  STAND_IN_BUNDLE,
  STAND_IN_WORKER,
  standInCall,
  standInReply,
  tenantOn,
} from "./helpers/processes.js";

describe("process executor with a stand-in worker", () => {
  let executor: ProcessExecutor;
  let a: TenantId;
  let b: TenantId;

  beforeAll(async () => {
    executor = await startProcessExecutor(
      { workers: 2, spareWorker: false, maxPendingPerWorker: 1_000 },
      { workerEntry: STAND_IN_WORKER },
    );
    a = tenantOn((id) => executor.shardOf(id), 0);
    b = tenantOn((id) => executor.shardOf(id), 1);
  });
  afterAll(() => executor.close());

  it("answers pipelined calls each with its own reply", async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 600 }, (_, i) => executor.execute(...standInCall(i % 2 === 0 ? a : b, { nonce: i }))),
    );
    expect(outcomes.map((o) => standInReply(o).nonce)).toEqual(Array.from({ length: 600 }, (_, i) => i));
  });

  it("keeps each tenant on one worker and spreads tenants over workers", async () => {
    const pidsOfA = new Set<number>();
    for (let i = 0; i < 5; i++) pidsOfA.add(standInReply(await executor.execute(...standInCall(a, {}))).pid);
    const pidOfB = standInReply(await executor.execute(...standInCall(b, {}))).pid;
    expect(pidsOfA.size).toBe(1);
    expect(pidsOfA.has(pidOfB)).toBe(false);
  });

  it("caps a call's timeout at the limit and passes a smaller budget through", async () => {
    expect(standInReply(await executor.execute(...standInCall(a, {}, 10))).timeoutMs).toBe(10);
    expect(standInReply(await executor.execute(...standInCall(a, {}, 2.2))).timeoutMs).toBe(3);
    expect(standInReply(await executor.execute(...standInCall(a, {}, 10_000))).timeoutMs).toBe(50);
    expect(standInReply(await executor.execute(...standInCall(a, {}))).timeoutMs).toBe(50);
  });

  it("fails a call with no budget left as timeout without running it", async () => {
    const outcome = await executor.execute(...standInCall(a, { op: "exit" }, 0));
    expect(outcome).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    expect(executor.workers().every((w) => w.ready)).toBe(true);
  });

  it("passes a failure the worker reports through with its code", async () => {
    const outcome = await executor.execute(...standInCall(a, { op: "timeout" }));
    expect(outcome).toMatchObject({ type: "failed", failure: { code: "timeout", message: "stand-in timeout" } });
  });

  it("rejects an aborted call with the signal's reason and keeps serving the tenant", async () => {
    const controller = new AbortController();
    const pending = executor.execute(...standInCall(a, { op: "busy", ms: 150 }), controller.signal);
    setTimeout(() => controller.abort(new Error("caller gave up")), 20);
    await expect(pending).rejects.toThrow("caller gave up");
    await expect(executor.execute(...standInCall(a, {}), controller.signal)).rejects.toThrow("caller gave up");
    expect(standInReply(await executor.execute(...standInCall(a, { nonce: "after" }))).nonce).toBe("after");
  });

  it("fails calls past maxPendingPerWorker as unavailable", async () => {
    const outcomes = await Promise.all(Array.from({ length: 1_100 }, () => executor.execute(...standInCall(b, {}))));
    const unavailable = outcomes.filter((o) => o.type === "failed" && o.failure.code === "unavailable");
    expect(unavailable).toHaveLength(100);
  });

  it("fails a describe whose export holds a non-function as invalid_result", async () => {
    const outcome = await executor.describe(TenantId.parse("broken"), STAND_IN_BUNDLE);
    expect(outcome).toMatchObject({ type: "failed", failure: { code: "invalid_result" } });
  });

  it("fails an event over maxEventChars as event_too_large without sending it", async () => {
    const outcome = await executor.execute(...standInCall(a, { op: "exit", pad: "x".repeat(1024 * 1024) }));
    expect(outcome).toMatchObject({ type: "failed", failure: { code: "event_too_large" } });
    expect(executor.workers().every((w) => w.ready)).toBe(true);
  });

  it("keeps at most 512 bundles loaded per worker and reloads an evicted one on its next call", async () => {
    const bundle = (i: number) => ({ hash: BundleHash.parse(`sha256-${i.toString(16).padStart(64, "0")}`), code: "x" });
    const first = standInCall(b, {}, undefined, bundle(0));
    await executor.execute(...first);
    let loaded = 0;
    for (let i = 1; i < 600; i++) {
      loaded = standInReply(await executor.execute(...standInCall(b, {}, undefined, bundle(i)))).loaded;
    }
    expect(loaded).toBe(512);
    expect(await executor.execute(...first)).toMatchObject({ type: "replied" });
  });

  it("reports a call's own run time as the worker measured it, and its wait behind another tenant as queued", async () => {
    const other = tenantOn((id) => executor.shardOf(id), 0, "neighbour");
    const [slow, quick] = await Promise.all([
      executor.execute(...standInCall(other, { op: "busy", ms: 100 })),
      executor.execute(...standInCall(a, { nonce: "quick" })),
    ]);
    expect(standInReply(quick).nonce).toBe("quick");
    // The stand-in reports 0.02 ms for every call it runs: that, not the 100 ms wait, is the call's duration.
    expect(quick.runMs).toBe(0.02);
    expect(slow.runMs).toBe(0.02);
    expect(quick.queuedMs).toBeGreaterThan(quick.runMs);
  });

  it("describes a bundle in the tenant's worker", async () => {
    const outcome = await executor.describe(a, STAND_IN_BUNDLE);
    expect(outcome).toMatchObject({ type: "described", handlers: ["toolCall", "turnEnd"] });
  });
});

describe("process executor when a worker fails", () => {
  let executor: ProcessExecutor;
  const events: SupervisorEvent[] = [];
  let a: TenantId;
  let b: TenantId;
  /** A tenant sharing `a`'s worker. */
  let m: TenantId;

  beforeAll(async () => {
    executor = await startProcessExecutor(
      // The smallest memory limit, so that a bomb outgrows it within the grace on a loaded machine; a grace
      // of 500 ms (not 150) so that a worker starved of CPU still grows and burns enough while overdue for its
      // kill to read as what it was (memory_limit, CPU spent) rather than a plain timeout.
      { workers: 2, spareWorker: true, killGraceMs: 500, limits: { memoryMb: 8 }, onEvent: (e) => events.push(e) },
      // Relief off: these tests hold the calls left behind a dying or hung call to what happens to them.
      { workerEntry: STAND_IN_WORKER, holdSliceMs: 0 },
    );
    a = tenantOn((id) => executor.shardOf(id), 0, "victim");
    b = tenantOn((id) => executor.shardOf(id), 1, "bystander");
    m = tenantOn((id) => executor.shardOf(id), 0, "mallory");
  });
  afterAll(() => executor.close());

  async function pidOf(tenant: TenantId): Promise<number> {
    return standInReply(await executor.execute(...standInCall(tenant, {}))).pid;
  }

  it("fails the call that crashed its worker, re-sends the calls queued behind it and respawns it", async () => {
    const before = await pidOf(a);
    const bystander = Array.from({ length: 20 }, (_, i) => executor.execute(...standInCall(b, { nonce: i })));
    const victims = await Promise.all([
      executor.execute(...standInCall(a, { op: "busy", ms: 20 })),
      executor.execute(...standInCall(a, { op: "exit" })),
      executor.execute(...standInCall(a, {})),
      executor.execute(...standInCall(a, {})),
    ]);
    // The call that finished before the crash was answered (its answer went out before the next call ran);
    // the call running when the worker died is the culprit; the calls queued behind it (bystanders) are
    // re-sent once to the replacement and answered there.
    expect(victims.map((o) => (o.type === "failed" ? `${o.failure.code}${blame(o)}` : o.type))).toEqual([
      "replied",
      "sandbox_crashed (culprit)",
      "replied",
      "replied",
    ]);
    expect(standInReply(victims[2] as SandboxResult).pid).not.toBe(before);
    expect((await Promise.all(bystander)).map((o) => standInReply(o).nonce)).toEqual([...Array(20).keys()]);
    const after = await pidOf(a);
    expect(after).not.toBe(before);
    expect(events).toContainEqual(
      expect.objectContaining({ type: "worker_exited", pid: before, reason: "crashed", exitCode: 70, failedCalls: 1 }),
    );
  });

  it("blames only the call that was running when its worker died, not one done with its answer unsent", async () => {
    await pidOf(a);
    // One batch: a's quick call runs first and its answer waits in the worker's outbox (answers go out
    // together) while m's call crashes the worker, so a's call is the oldest unanswered but not the culprit.
    const [done, crashed, queued] = await Promise.all([
      executor.execute(...standInCall(a, { nonce: "first" })),
      executor.execute(...standInCall(m, { op: "exit" })),
      executor.execute(...standInCall(a, { nonce: "queued" })),
    ]);
    expect(done.type === "replied" || blame(done)).toBe(done.type === "replied" || " (bystander)");
    expect(crashed).toMatchObject({ type: "failed", failure: { code: "sandbox_crashed" } });
    expect(blame(crashed)).toBe(" (culprit)");
    expect(standInReply(queued).nonce).toBe("queued");
  });

  it("answers another tenant's call queued behind a crashing call on the replacement worker", async () => {
    const before = await pidOf(a);
    const [crashed, queued] = await Promise.all([
      executor.execute(...standInCall(m, { op: "exit" })),
      executor.execute(...standInCall(a, { nonce: "redact" })),
    ]);
    expect(crashed.type === "failed" && crashed.failure).toMatchObject({ code: "sandbox_crashed" });
    expect(blame(crashed)).toBe(" (culprit)");
    expect(queued.type).toBe("replied");
    expect(standInReply(queued)).toMatchObject({ nonce: "redact" });
    expect(standInReply(queued).pid).not.toBe(before);
    expect(queued.queuedMs).toBeGreaterThan(0);
  });

  it("re-sends a bystander only once: a second death settles it as sandbox_crashed (bystander)", async () => {
    await pidOf(a);
    // Both queued calls are re-sent in order; on the replacement m's second crash has a's call behind it again.
    const [first, second, queued] = await Promise.all([
      executor.execute(...standInCall(m, { op: "exit" })),
      executor.execute(...standInCall(m, { op: "exit" })),
      executor.execute(...standInCall(a, { nonce: "twice" })),
    ]);
    expect(blame(first)).toBe(" (culprit)");
    expect(blame(second)).toBe(" (culprit)");
    expect(queued).toMatchObject({ type: "failed", failure: { code: "sandbox_crashed", bystander: true } });
    expect(queued.type === "failed" && queued.failure.message).not.toContain(m);
  });

  it("charges a death among calls of one isolate sharing a running mark to the marked call, and fails its mates unsent", async () => {
    const before = await pidOf(a);
    const crashesBefore = events.filter((e) => e.type === "worker_exited" && e.reason === "crashed").length;
    // One read of 15 calls: a backlog, so a's 12 calls may run under one mark (worker-main.ts, RunningMarks).
    const ours = Array.from({ length: 12 }, (_, i) =>
      executor.execute(...standInCall(a, i === 5 ? { op: "exit" } : { nonce: i })),
    );
    const theirs = Array.from({ length: 3 }, (_, i) => executor.execute(...standInCall(m, { nonce: i })));
    const outcomes = await Promise.all(ours);
    const culprits = outcomes.flatMap((o, i) => (o.type === "failed" && blame(o) === " (culprit)" ? [i] : []));
    // One death, one strike: the call the mark named, at or before the call that exited.
    expect(culprits).toHaveLength(1);
    const culprit = culprits[0] ?? -1;
    expect(culprit).toBeLessThanOrEqual(5);
    // Before it: answered (re-sent to the replacement); after it, the exit included: listed as its mates,
    // failed as bystanders of their own hook and never re-sent, so no second worker died.
    for (const [i, outcome] of outcomes.entries()) {
      if (i < culprit) expect(standInReply(outcome).nonce).toBe(i);
      if (i <= culprit) continue;
      expect(outcome).toMatchObject({ type: "failed", failure: { code: "sandbox_crashed", bystander: true } });
      expect(outcome.type === "failed" && outcome.failure.message).toContain("this hook's calls in a row");
    }
    // The other tenant's calls on that worker are re-sent and answered by the replacement.
    const answered = (await Promise.all(theirs)).map((o) => standInReply(o));
    expect(answered.map((r) => r.nonce)).toEqual([0, 1, 2]);
    expect(answered.every((r) => r.pid !== before)).toBe(true);
    const crashes = events.filter((e) => e.type === "worker_exited" && e.reason === "crashed");
    expect(crashes.length - crashesBefore).toBe(1);
    expect(crashes.at(-1)).toMatchObject({ pid: before });
  });

  it("gives a call with a longer timeout than the call before it a running mark of its own", async () => {
    const before = await pidOf(a);
    // A backlog of a's calls. The host times calls sharing a mark by the marked call's deadline: for a 5 ms
    // timeout, a kill 25 + 500 ms (its backstop, the grace) after the mark. The 50 ms call runs 640 ms, inside
    // its own 250 + 500 ms, so it must not share the short call's mark, or it would be killed over it.
    const outcomes = await Promise.all([
      executor.execute(...standInCall(a, { nonce: "short" }, 5)),
      executor.execute(...standInCall(a, { op: "busy", ms: 640, nonce: "long" }, 50)),
      ...Array.from({ length: 8 }, (_, i) => executor.execute(...standInCall(a, { nonce: i }, 5))),
    ]);
    expect(outcomes.map((o) => standInReply(o).nonce)).toEqual(["short", "long", ...Array(8).keys()]);
    expect(outcomes.every((o) => standInReply(o).pid === before)).toBe(true);
  });

  it("times out the call that hung, not an earlier one whose answer never left the worker", async () => {
    await pidOf(a);
    const [done, hung] = await Promise.all([
      executor.execute(...standInCall(a, { nonce: "first" })),
      executor.execute(...standInCall(m, { op: "hang" }, 30)),
    ]);
    expect(hung).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    expect(blame(hung)).toBe(" (culprit)");
    expect(done.type === "replied" || blame(done)).toBe(done.type === "replied" || " (bystander)");
    // The hung call is charged from when it started running; a bystander never ran.
    expect(hung.runMs).toBeGreaterThan(0);
    expect(done.type === "replied" || done.runMs).toBe(done.type === "replied" || 0);
  });

  it("kills a worker that does not answer by its deadline: timeout for that call, re-sends the one behind it", async () => {
    const before = await pidOf(a);
    const bystander = executor.execute(...standInCall(b, { op: "busy", ms: 100 }));
    const outcomes = await Promise.all([
      executor.execute(...standInCall(a, { op: "hang" }, 30)),
      executor.execute(...standInCall(a, {})),
    ]);
    expect(outcomes[0]).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    expect(standInReply(outcomes[1] as SandboxResult).pid).not.toBe(before);
    expect(standInReply(await bystander).pid).not.toBe(before);
    expect(await pidOf(a)).not.toBe(before);
    expect(events).toContainEqual(expect.objectContaining({ type: "worker_exited", pid: before, reason: "deadline" }));
  });

  it("holds a hung call to its own short budget after a call with a long one", async () => {
    await executor.execute(...standInCall(a, { op: "busy", ms: 5 }, 5_000));
    const hung = await executor.execute(...standInCall(a, { op: "hang" }, 30));
    expect(hung).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    expect(hung.type === "failed" && hung.failure.message).toContain(
      "150 ms wall-clock backstop (5× its 30 ms timeout)",
    );
    // Killed at 5 × 30 + 500 ms, long before the 5 s budget of the call before it would have allowed.
    expect(hung.runMs).toBeLessThan(3_000);
  });

  it("charges a killed call the CPU its worker burnt while it was overdue: spinning counts, sleeping does not", async () => {
    const spun = await executor.execute(...standInCall(a, { op: "hang" }, 30));
    expect(spun).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    const slept = await executor.execute(...standInCall(a, { op: "sleep" }, 30));
    expect(slept).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    // Both were killed 500 ms after their 150 ms backstop: the spinning one burnt CPU meanwhile (on a quiet
    // machine about 500 ms, past its 30 ms timeout; a loaded one gives it less), the sleeping one none.
    expect(slept.cpuMs).toBeLessThan(2);
    expect(spun.cpuMs).toBeGreaterThan(slept.cpuMs + 2);
    expect(slept.runMs).toBeGreaterThanOrEqual(150);
  });

  it("names memory as the cause when a worker killed over its deadline grew past the memory limit meanwhile", async () => {
    const before = await pidOf(a);
    const bomb = await executor.execute(...standInCall(a, { op: "bomb" }, 30));
    expect(bomb).toMatchObject({ type: "failed", failure: { code: "memory_limit" } });
    expect(bomb.type === "failed" && bomb.failure.message).toContain("8 MB memory limit");
    expect(blame(bomb)).toBe(" (culprit)");
    expect(await pidOf(a)).not.toBe(before);
  });

  it("names memory as the cause when a worker aborts printing V8's out-of-memory report", async () => {
    const before = await pidOf(a);
    const [oom, queued] = await Promise.all([
      executor.execute(...standInCall(a, { op: "oom" })),
      executor.execute(...standInCall(a, { nonce: "after" })),
    ]);
    expect(oom).toMatchObject({ type: "failed", failure: { code: "memory_limit" } });
    expect(oom.type === "failed" && oom.failure.message).toMatch(
      /ran out of memory and its worker died \(signal SIGABRT\)/,
    );
    expect(standInReply(queued)).toMatchObject({ nonce: "after" });
    expect(standInReply(queued).pid).not.toBe(before);
  });

  it("does not kill a worker working through a long batch whose every call answers in time", async () => {
    const before = await pidOf(a);
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, (_, i) => executor.execute(...standInCall(a, { op: "busy", ms: 60, nonce: i }))),
    );
    expect(outcomes.map((o) => standInReply(o).nonce)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(await pidOf(a)).toBe(before);
  });

  it("kills a worker that sends a malformed message", async () => {
    const before = await pidOf(a);
    const outcome = await executor.execute(...standInCall(a, { op: "garbage" }));
    expect(outcome).toMatchObject({ type: "failed", failure: { code: "sandbox_crashed" } });
    expect(await pidOf(a)).not.toBe(before);
    expect(events).toContainEqual(expect.objectContaining({ type: "worker_exited", pid: before, reason: "protocol" }));
  });

  it("queues calls made while a crashed worker is being replaced and runs them on the new one", async () => {
    const crash = executor.execute(...standInCall(a, { op: "sigkill" }));
    const queued = Array.from({ length: 5 }, () =>
      crash.then(() => executor.execute(...standInCall(a, { nonce: "queued" }))),
    );
    expect(await crash).toMatchObject({ type: "failed", failure: { code: "sandbox_crashed" } });
    for (const outcome of await Promise.all(queued)) expect(standInReply(outcome).nonce).toBe("queued");
  });
});

/** Whether a failure is blamed on its call: " (bystander)" when the supervisor marked it so. */
function blame(outcome: SandboxResult): string {
  if (outcome.type !== "failed") return "";
  return outcome.failure.bystander === true ? " (bystander)" : " (culprit)";
}

describe("process executor RSS cap", () => {
  it("drains a worker above its cap and replaces it without failing a call", async () => {
    const events: SupervisorEvent[] = [];
    const executor = await startProcessExecutor(
      { workers: 1, spareWorker: false, rssCapMb: 1, rssCheckMs: 20, onEvent: (e) => events.push(e) },
      { workerEntry: STAND_IN_WORKER },
    );
    try {
      const tenant = TenantId.parse("grower");
      const pids = new Set<number>();
      const outcomes = [];
      for (let i = 0; i < 40 && pids.size < 2; i++) {
        const outcome = await executor.execute(...standInCall(tenant, { op: "busy", ms: 5 }));
        outcomes.push(outcome);
        pids.add(standInReply(outcome).pid);
      }
      expect(pids.size).toBe(2);
      expect(outcomes.every((o) => o.type === "replied")).toBe(true);
      const [first] = pids;
      expect(await eventually(() => events.some((e) => e.type === "worker_exited" && e.pid === first))).toBe(true);
      expect(events).toContainEqual(expect.objectContaining({ type: "worker_recycling", pid: first, slot: 0 }));
      expect(events).toContainEqual(
        expect.objectContaining({ type: "worker_exited", pid: first, reason: "recycled", failedCalls: 0 }),
      );
    } finally {
      await executor.close();
    }
  });
});
