import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type PendingCall, pendingCall } from "../../../sandbox/supervisor/pending-call.js";
import { Relief } from "../../../sandbox/supervisor/relief.js";
import type { WorkerProcess } from "../../../sandbox/supervisor/worker-process.js";
import { type SandboxCall, TenantId } from "../../../src/protocol/index.js";
import { STAND_IN_BUNDLE } from "./helpers/processes.js";

/**
 * When a worker stops being held (relief.ts), on the host's clock and without processes: the host reads a
 * worker's running mark from a file at once, and its answers from the channel when its event loop gets to
 * them, so on a busy host an answer the worker sent before the hold can arrive after the hold was seen.
 * That answer must not free a worker whose holding call still runs.
 */

const SLICE_MS = 2;

interface FakeWorker {
  readonly pid: number;
  readonly pending: Map<number, PendingCall>;
  progressAt: number;
  readonly ready: true;
  readonly accepting: true;
  runningId: number | undefined;
  runningSince: number;
  ranMs: number;
  readonly moved: PendingCall[];
}

function fakeWorker(pid: number): FakeWorker {
  return {
    pid,
    pending: new Map(),
    progressAt: 0,
    ready: true,
    accepting: true,
    runningId: undefined,
    runningSince: 0,
    ranMs: 0,
    moved: [],
  };
}

/** The fake as the `WorkerProcess` relief sees: what it reads and the two ways it moves calls. */
function asWorker(fake: FakeWorker): WorkerProcess {
  const view = {
    get pid() {
      return fake.pid;
    },
    get pending() {
      return fake.pending;
    },
    get progressAt() {
      return fake.progressAt;
    },
    get ready() {
      return fake.ready;
    },
    get accepting() {
      return fake.accepting;
    },
    running() {
      const entry = fake.runningId === undefined ? undefined : fake.pending.get(fake.runningId);
      return entry === undefined ? undefined : { entry, startedAt: fake.runningSince, loading: false };
    },
    schedule() {
      return { runMs: fake.ranMs, waitMs: 0 };
    },
    resend(entry: PendingCall) {
      fake.moved.push(entry);
      fake.pending.set(1000 + fake.moved.length, entry);
    },
    takeBack(id: number) {
      const entry = fake.pending.get(id);
      if (entry !== undefined) entry.answered = true;
    },
  };
  return view as unknown as WorkerProcess;
}

function callOf(tenant: string): PendingCall & { kind: "call" } {
  const call: SandboxCall = {
    tenantId: TenantId.parse(tenant),
    point: "tool.call",
    eventJson: "{}",
    ctxJson: "{}",
    timeoutMs: 50,
  };
  return pendingCall(STAND_IN_BUNDLE, call, () => {}) as PendingCall & { kind: "call" };
}

describe("a held worker", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("stays held when an answer it sent before the hold reaches the host after it, while its call still runs", () => {
    const held = fakeWorker(1);
    const spare = fakeWorker(2);
    const [earlier, spin, waiting] = [callOf("acme"), callOf("mallory"), callOf("initech")];
    held.pending.set(1, earlier);
    held.pending.set(2, spin);
    held.pending.set(3, waiting);
    // The worker answered `earlier` and runs `spin`: its mark says so; the host has not read the answer.
    held.runningId = 2;
    held.runningSince = performance.now();
    const [heldWorker, spareWorker] = [asWorker(held), asWorker(spare)];
    const relief = new Relief(
      { watched: () => [heldWorker], targets: () => [heldWorker, spareWorker], stays: () => false },
      SLICE_MS,
    );
    relief.watch(heldWorker);

    vi.advanceTimersByTime(SLICE_MS / 2);
    held.ranMs = SLICE_MS;
    vi.advanceTimersByTime(SLICE_MS);
    expect(spare.moved.map((entry) => entry.kind === "call" && entry.call.tenantId)).toEqual(["acme", "initech"]);

    // Now the host reads the earlier answer, and the moved calls settle on the spare.
    held.pending.delete(1);
    held.progressAt = performance.now();
    for (const entry of spare.moved) if (entry.kind === "call") relief.settled(entry.call);
    vi.advanceTimersByTime(SLICE_MS / 2);

    // initech's next call must not go back behind the spin.
    expect(relief.route(TenantId.parse("initech"), heldWorker)).toBe(spareWorker);
    // Once the worker answers the spin, it is free again.
    held.pending.delete(2);
    held.runningId = undefined;
    held.progressAt = performance.now();
    vi.advanceTimersByTime(SLICE_MS / 2);
    expect(relief.route(TenantId.parse("initech"), heldWorker)).toBeUndefined();
    relief.close();
  });
});
