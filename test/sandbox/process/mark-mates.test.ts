import { writeSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { CallDeadline } from "../../../sandbox/supervisor/call-deadline.js";
import { type PendingCall, pendingCall } from "../../../sandbox/supervisor/pending-call.js";
import { RunningMarkFile } from "../../../sandbox/supervisor/running-mark-file.js";
import { settleAtExit } from "../../../sandbox/supervisor/settle-exit.js";
import {
  BundleHash,
  monotonicMs,
  RUNNING_MARK_BYTES,
  type SandboxResult,
  TenantId,
  writeRunningMark,
} from "../../../src/protocol/index.js";

const A = { hash: BundleHash.parse(`sha256-${"a".repeat(64)}`), code: "a" };
const B = { hash: BundleHash.parse(`sha256-${"b".repeat(64)}`), code: "b" };

/** A pending call of `tenant` on `bundle`, and what it settled with. */
function callOf(tenant: string, bundle = A, observe = false) {
  const settled: SandboxResult[] = [];
  const call = {
    tenantId: TenantId.parse(tenant),
    point: "tool.call" as const,
    eventJson: "{}",
    ctxJson: "{}",
    timeoutMs: 50,
    ...(observe ? { priority: "observe" as const } : {}),
  };
  return { entry: pendingCall(bundle, call, (r) => settled.push(r)), settled };
}

let file: RunningMarkFile | undefined;
afterEach(() => file?.close());

/** The host's deadline over `pending`, with the worker's mark on file naming `id` and `mates`. */
function deadlineWithMark(pending: Map<number, PendingCall>, id: number, mates: number[]): CallDeadline {
  file = RunningMarkFile.open();
  if (file === undefined) throw new Error("no mark file could be made");
  const view = new Float64Array(RUNNING_MARK_BYTES / 8);
  writeRunningMark(view, id, monotonicMs(), "run", mates);
  writeSync(file.fd, new Uint8Array(view.buffer), 0, RUNNING_MARK_BYTES, 0);
  return new CallDeadline(pending, file, {
    pid: process.pid,
    loadTimeoutMs: 1_000,
    killGraceMs: 100,
    onDue: () => {},
    onIdle: () => {},
  });
}

describe("a death under a running mark shared by an isolate's calls", () => {
  it("fails the marked call as the culprit and its listed mates unsent; every other call is re-sent", () => {
    const culprit = callOf("acme");
    const mate = callOf("acme");
    const later = callOf("acme");
    const other = callOf("globex");
    const pending = new Map<number, PendingCall>([
      [1, culprit.entry],
      [2, mate.entry],
      [3, other.entry],
      [4, later.entry],
    ]);
    const blame = deadlineWithMark(pending, 1, [2]).blame("crashed");
    expect(blame.culprit).toBe(culprit.entry);
    expect(blame.mates).toEqual([mate.entry]);
    const ended = { reason: "crashed" as const, pid: 7, how: "signal SIGABRT", loadTimeoutMs: 1_000 };
    const retry = settleAtExit(
      pending.values(),
      { ...ended, killGraceMs: 100, memoryMb: 8, outOfMemory: false },
      blame,
      performance.now(),
    );
    expect(culprit.settled[0]).toMatchObject({ type: "failed", failure: { code: "sandbox_crashed" } });
    expect(culprit.settled[0]?.type === "failed" && culprit.settled[0].failure.bystander).toBeFalsy();
    expect(mate.settled[0]).toMatchObject({ type: "failed", failure: { code: "sandbox_crashed", bystander: true } });
    // Not listed (it came in a later read, or past the mark's window): re-sent like any bystander.
    expect(retry).toEqual([other.entry, later.entry]);
  });

  it("counts as mates only calls of the culprit's own isolate, whatever a lying worker lists", () => {
    const culprit = callOf("acme");
    const otherTenant = callOf("globex");
    const otherBundle = callOf("acme", B);
    const otherLane = callOf("acme", A, true);
    const mate = callOf("acme");
    const pending = new Map<number, PendingCall>([
      [1, culprit.entry],
      [2, otherTenant.entry],
      [3, otherBundle.entry],
      [4, otherLane.entry],
      [5, mate.entry],
    ]);
    // The mark lists everything, the culprit itself and an id nobody sent too.
    const blame = deadlineWithMark(pending, 1, [1, 2, 3, 4, 5, 99]).blame("crashed");
    expect(blame.mates).toEqual([mate.entry]);
  });

  it("lists no mates when the mark names a call no longer pending (the worker died between calls)", () => {
    const queued = callOf("acme");
    const pending = new Map<number, PendingCall>([[2, queued.entry]]);
    const blame = deadlineWithMark(pending, 1, [2]).blame("crashed");
    expect(blame.culprit).toBeUndefined();
    expect(blame.mates).toEqual([]);
  });
});
