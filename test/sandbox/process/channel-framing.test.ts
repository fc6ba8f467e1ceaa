import { fork } from "node:child_process";
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcessExecutor } from "../../../sandbox/supervisor/create-executor.js";
import type { SupervisorEvent } from "../../../sandbox/supervisor/index.js";
import type { ProcessExecutor } from "../../../sandbox/supervisor/process-executor.js";
import { workerSpawnSpec } from "../../../sandbox/supervisor/spawn-spec.js";
import {
  CHANNEL_FD_ENV,
  decodeResponseFrame,
  encodeFrames,
  FrameReader,
  type SandboxResult,
  type TenantId,
  type WorkerRequest,
} from "../../../src/protocol/index.js";
import { STAND_IN_BUNDLE, STAND_IN_WORKER, standInCall, standInReply, tenantOn } from "./helpers/processes.js";

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

  for (const op of ["frame-oversized", "frame-garbage", "frame-bad-body", "frame-bad-flags"]) {
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

/**
 * The worker's end: its host is trusted, but a call frame whose observe flag is neither 0 nor 1 (a host bug,
 * a corrupted write) must not run as either kind of call. The worker answers it `unavailable` under its id,
 * as any malformed request with an id, and serves on.
 */
describe("the framed channel into a worker", () => {
  it("answers a call frame with an unknown flag value unavailable and serves the calls around it", async () => {
    const { child, frames, received } = forkStandInWorker();
    try {
      const call = (id: number, nonce: string, observe: boolean): WorkerRequest => ({
        kind: "call",
        id,
        bundleHash: STAND_IN_BUNDLE.hash,
        call: {
          ...standInCall("t1" as TenantId, { nonce })[1],
          ...(observe ? { priority: "observe" as const } : {}),
        },
      });
      const bad = Buffer.from(encodeFrames([call(2, "bad", false)]));
      // The flag byte follows the length prefix, the kind byte and two float64s (id, timeoutMs).
      bad[4 + 1 + 16] = 2;
      const load: WorkerRequest = { kind: "load", bundleHash: STAND_IN_BUNDLE.hash, code: "x", limits: LIMITS };
      frames.write(
        Buffer.concat([encodeFrames([load, call(1, "before", true)]), bad, encodeFrames([call(3, "after", false)])]),
      );
      const until = Date.now() + 20_000;
      while (received.filter((m) => (m as { kind?: string }).kind === "result").length < 3 && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const results = received.filter((m) => (m as { kind?: string }).kind === "result") as {
        id: number;
        result: SandboxResult;
      }[];
      expect(results.map((r) => r.id)).toEqual([1, 2, 3]);
      const replyOf = (i: number) => standInReply(results[i]?.result as SandboxResult) as { priority?: string };
      expect(replyOf(0)).toMatchObject({ nonce: "before", priority: "observe" });
      expect(results[1]?.result).toMatchObject({ type: "failed", failure: { code: "unavailable" } });
      expect(replyOf(2)).toMatchObject({ nonce: "after" });
      expect(replyOf(2).priority).toBeUndefined();
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill("SIGKILL");
      frames.destroy();
    }
  });
});

/**
 * A `cancel` takes back a call the worker has not run yet: the worker answers that call `unavailable`
 * without running it and runs the rest. A cancel for a call it never got or already ran, and a cancel
 * frame that does not parse, change nothing: every call is answered exactly once and the worker serves on.
 */
describe("cancel frames into a worker", () => {
  it("skips a call taken back while it waited, ignores cancels for other ids, and answers each call once", async () => {
    const { child, frames, received } = forkStandInWorker();
    const results = () =>
      received.filter((m) => (m as { kind?: string }).kind === "result") as { id: number; result: SandboxResult }[];
    const answered = async (count: number) => {
      const until = Date.now() + 20_000;
      while (results().length < count && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    try {
      const call = (id: number, tenant: string, event: Record<string, unknown>): WorkerRequest => ({
        kind: "call",
        id,
        bundleHash: STAND_IN_BUNDLE.hash,
        call: standInCall(tenant as TenantId, event)[1],
      });
      const load: WorkerRequest = { kind: "load", bundleHash: STAND_IN_BUNDLE.hash, code: "x", limits: LIMITS };
      const rawJson = (text: string) => {
        const body = Buffer.from(text, "utf8");
        const head = Buffer.alloc(5);
        head.writeUInt32LE(body.length + 1, 0);
        head[4] = 3;
        return Buffer.concat([head, body]);
      };
      frames.write(encodeFrames([load, call(0, "t1", { nonce: "done" })]));
      await answered(1);
      frames.write(
        encodeFrames([
          call(1, "m1", { op: "busy", ms: 60 }),
          call(2, "t1", { nonce: "kept" }),
          call(3, "t1", { nonce: "taken back" }),
          call(4, "t1", { nonce: "after" }),
        ]),
      );
      // Read with the calls or, if they were read first, while call 1 runs (the worker reads its channel
      // after a long call): either way before call 3 runs. Call 0 ran already; 99 was never sent.
      frames.write(
        Buffer.concat([
          encodeFrames([
            { kind: "cancel", id: 3 },
            { kind: "cancel", id: 99 },
            { kind: "cancel", id: 0 },
          ]),
          rawJson('{"kind":"cancel","id":"3"}'),
          rawJson('{"kind":"cancel"'),
        ]),
      );
      await answered(5);
      // A call sent after everything above: its answer comes after any stray answer the cancels could cause.
      frames.write(encodeFrames([call(5, "t1", { nonce: "last" })]));
      await answered(6);
      const byId = new Map(results().map((r) => [r.id, r.result]));
      expect(
        results()
          .map((r) => r.id)
          .sort(),
      ).toEqual([0, 1, 2, 3, 4, 5]);
      expect(byId.get(3)).toMatchObject({ type: "failed", failure: { code: "unavailable" } });
      const served = [0, 1, 2, 4, 5].map((id) => standInReply(byId.get(id) as SandboxResult).served);
      expect(served).toEqual([1, 2, 3, 4, 5]);
      expect(standInReply(byId.get(4) as SandboxResult).nonce).toBe("after");
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill("SIGKILL");
      frames.destroy();
    }
  });
});

const LIMITS = { memoryMb: 32, maxResultChars: 65_536, maxStateChars: 16_384, maxLogLines: 50, maxLogChars: 8_192 };

/** The stand-in worker on a framed channel (fd 5): its process, the channel, and every frame it answered. */
function forkStandInWorker() {
  const spec = workerSpawnSpec(STAND_IN_WORKER);
  const child = fork(spec.entry, [], {
    execArgv: [...spec.execArgv],
    cwd: spec.cwd,
    env: { ...spec.env, [CHANNEL_FD_ENV]: "5" },
    stdio: ["ignore", "ignore", "ignore", "ipc", "ignore", "pipe"],
  });
  const frames = (child.stdio as readonly unknown[])[5] as Socket;
  const received: unknown[] = [];
  const reader = new FrameReader((bytes, start, end) => received.push(decodeResponseFrame(bytes, start, end)));
  frames.on("data", (chunk: Buffer) => reader.push(chunk));
  return { child, frames, received };
}
