import { describe, expect, it, vi } from "vitest";
import {
  DecisionLog,
  type DecisionsDroppedEvent,
  recordOf,
  runShare,
  sampledRun,
  viewOf,
} from "../../src/decisionlog/index.js";
import { createDispatcher, type DecisionEntry, type DecisionSink } from "../../src/dispatch/index.js";
import { RunId, TenantId } from "../../src/protocol/index.js";
import { type DecisionRow, type LogSettings, MemoryBundleStore, StoreError } from "../../src/store/index.js";
import { bundleOf, FakeExecutor, returned, TENANT, toolCallEvent } from "../dispatch/helpers.js";

const SECRET = "hunter2-do-not-store";
const on = (extra: Partial<LogSettings> = {}): LogSettings => ({
  sample: 1,
  mask: [],
  retainDays: 7,
  retain: 10_000,
  ...extra,
});

async function storeWith(settings: LogSettings | null): Promise<MemoryBundleStore> {
  const store = new MemoryBundleStore();
  if (settings !== null) await store.setLogSettings({ tenantId: TENANT, settings, by: "ops" });
  return store;
}

/** The store with its appends replaced (settings still read from it). */
function appending(store: MemoryBundleStore, appendDecisions: (rows: readonly DecisionRow[]) => Promise<number>) {
  return Object.assign(Object.create(store), {
    logSettings: (t?: TenantId) => store.logSettings(t),
    appendDecisions,
  }) as MemoryBundleStore;
}

function dispatcherWith(
  log: DecisionSink,
  executor = new FakeExecutor(() => returned({ type: "block", reason: "no" })),
) {
  return createDispatcher({ executor, decisionLog: log });
}

async function call(dispatcher: ReturnType<typeof createDispatcher>, runId: string, args = { path: "/tmp/x" }) {
  const run = dispatcher.openRun({ tenantId: TENANT, runId: RunId.parse(runId), bundle: bundleOf(["tool.call"]) });
  run.beginTurn(1);
  return run.dispatch("tool.call", toolCallEvent(args));
}

describe("the decision log", () => {
  it("records a tenant hook call with the strings that crossed, its record and the deciding version", async () => {
    const store = await storeWith(on());
    const log = await DecisionLog.open(store);
    const executor = new FakeExecutor(() => returned({ type: "block", reason: "no" }));
    const { decision, records } = await call(dispatcherWith(log, executor), "run-a");
    expect(decision.type).toBe("block");
    await log.flush();
    const [row] = await store.decisions({ tenantId: TENANT });
    expect(row).toMatchObject({ runId: "run-a", turn: 1, point: "tool.call", version: 3, truncated: false });
    expect(JSON.parse(row?.event ?? "")).toEqual(toolCallEvent());
    // Stored: what the row's columns do not already say. Viewed: the whole ctx the hook saw.
    expect(JSON.parse(row?.ctx ?? "")).toEqual({ config: { limit: 10 }, state: {} });
    // The same ctx, key for key and in order: `--json` and exports read as the hook's ctx did.
    expect(JSON.stringify(row === undefined ? undefined : viewOf(row).ctx)).toBe(executor.seen[0]?.call.ctxJson);
    expect(executor.seen[0]?.ctx).toMatchObject({ tenantId: "acme", runId: "run-a", turn: 1, state: {} });
    // Likewise the record: stored without point, hook id and bundle; viewed as the HookRecord it was.
    const stored = JSON.parse(row?.record ?? "");
    expect(stored).toMatchObject({ outcome: { type: "decided", result: { type: "block", reason: "no" } } });
    expect(["point", "hookId", "bundle"].filter((key) => key in stored)).toEqual([]);
    expect(JSON.stringify(row === undefined ? undefined : recordOf(row))).toBe(JSON.stringify(records[0]));
    expect(records[0]).toMatchObject({ hookId: "tenant:acme@v3", bundle: { version: 3 } });
    expect(log.stats()).toMatchObject({ recorded: 1, written: 1, droppedFull: 0, pending: 0 });
    await log.close();
  });

  it("records nothing for a tenant whose log is off, and asks nothing per call", async () => {
    const store = await storeWith(null);
    const log = await DecisionLog.open(store);
    let asked = 0;
    const counting: DecisionSink = {
      sampled: (t, r) => {
        asked++;
        return log.sampled(t, r);
      },
      record: () => expect.unreachable("an unsampled run is never recorded"),
    };
    const dispatcher = dispatcherWith(counting);
    const run = dispatcher.openRun({ tenantId: TENANT, runId: RunId.parse("r"), bundle: bundleOf(["tool.call"]) });
    for (let i = 0; i < 5; i++) await run.dispatch("tool.call", toolCallEvent());
    expect(asked).toBe(1);
    await log.close();
    expect(await store.decisions({ tenantId: TENANT })).toEqual([]);
  });

  it("logs every tenant without settings of its own when the runtime asks for all", async () => {
    const store = await storeWith(null);
    const log = await DecisionLog.open(store, { all: { sample: 1, retain: 5 } });
    await call(dispatcherWith(log), "run-all");
    await log.close();
    expect(await store.decisions({ tenantId: TENANT })).toHaveLength(1);
  });

  it("drops and hashes the named fields before anything reaches the store", async () => {
    const mask = [
      { path: "event.call.args.password", action: "drop" as const },
      { path: "event.call.args.token", action: "hash" as const },
      { path: "result.reason", action: "drop" as const },
      { path: "ctx.config.apiKey", action: "drop" as const },
    ];
    const store = await storeWith(on({ mask }));
    const seen: DecisionRow[] = [];
    const spy = Object.assign(Object.create(store), {
      appendDecisions: (rows: readonly DecisionRow[]) => {
        seen.push(...rows);
        return store.appendDecisions(rows);
      },
      logSettings: (t?: TenantId) => store.logSettings(t),
    });
    const log = await DecisionLog.open(spy);
    const executor = new FakeExecutor(() => returned({ type: "block", reason: `leaked ${SECRET}` }));
    const dispatcher = createDispatcher({ executor, decisionLog: log });
    const run = dispatcher.openRun({
      tenantId: TENANT,
      runId: RunId.parse("run-m"),
      bundle: bundleOf(["tool.call"], { config: { apiKey: SECRET, limit: 1 } }),
    });
    const { decision } = await run.dispatch(
      "tool.call",
      toolCallEvent({ path: "/x", password: SECRET, token: SECRET }),
    );
    expect(decision).toMatchObject({ type: "block", reason: `leaked ${SECRET}` });
    expect(executor.seen[0]?.event).toMatchObject({ call: { args: { password: SECRET } } });
    await log.close();
    expect(seen).toHaveLength(1);
    expect(JSON.stringify(seen)).not.toContain(SECRET);
    const [row] = await store.decisions({ tenantId: TENANT });
    expect(JSON.stringify(row)).not.toContain(SECRET);
    const args = JSON.parse(row?.event ?? "").call.args;
    expect(args.password).toBeUndefined();
    expect(args.path).toBe("/x");
    expect(args.token).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(JSON.parse(row?.ctx ?? "").config).toEqual({ limit: 1 });
  });

  it("stores an event over the cap truncated and marked, with its whole length", async () => {
    const store = await storeWith(on());
    const log = await DecisionLog.open(store, { maxEventChars: 100 });
    await call(dispatcherWith(log), "run-big", { path: "x".repeat(5000) });
    await log.close();
    const [row] = await store.decisions({ tenantId: TENANT });
    expect(row?.truncated).toBe(true);
    expect(row?.event).toHaveLength(100);
    expect(row?.eventChars).toBeGreaterThan(5000);
  });

  it("never blocks or fails a hook call when the store blocks: a full buffer drops and counts", async () => {
    const store = await storeWith(on());
    let writes = 0;
    const blocking = appending(store, () => {
      writes++;
      return new Promise<number>(() => {}); // never settles
    });
    const told: DecisionsDroppedEvent[] = [];
    const log = await DecisionLog.open(blocking, {
      bufferSize: 10,
      batchSize: 4,
      flushMs: 1,
      onDropped: (e) => told.push(e),
    });
    const dispatcher = dispatcherWith(log);
    const decisions: string[] = [];
    for (let i = 0; i < 60; i++) {
      decisions.push((await call(dispatcher, `run-${i}`)).decision.type);
      if (i % 10 === 0) await new Promise((r) => setTimeout(r, 5)); // lets the writer start its stuck batch
    }
    expect(decisions.every((d) => d === "block")).toBe(true);
    expect(writes).toBe(1);
    const stats = log.stats();
    // One stuck batch (at most 4), then a full buffer of 10; every other entry dropped and counted.
    expect(stats.recorded).toBeLessThanOrEqual(14);
    expect(stats.recorded + stats.droppedFull).toBe(60);
    expect(stats.pending).toBe(stats.recorded);
    expect(stats.written).toBe(0);
    // Drops are told in sums, not once per entry.
    expect(told.length).toBeGreaterThan(0);
    expect(told.length).toBeLessThan(stats.droppedFull);
    expect(told.every((e) => e.type === "decisionlog.dropped" && e.reason === "full")).toBe(true);
    expect(told.reduce((n, e) => n + e.count, 0)).toBeLessThanOrEqual(stats.droppedFull);
  });

  it("counts a batch the store refused and keeps taking calls", async () => {
    const store = await storeWith(on());
    const failing = appending(store, () => Promise.reject(new Error("disk full")));
    const told: DecisionsDroppedEvent[] = [];
    const log = await DecisionLog.open(failing, { onDropped: (e) => told.push(e) });
    await call(dispatcherWith(log), "run-f");
    await log.close();
    expect(log.stats()).toMatchObject({ recorded: 1, written: 0, droppedFailed: 1 });
    expect(told).toEqual([{ type: "decisionlog.dropped", reason: "failed", count: 1 }]);
  });

  it("writes a batch again after the store comes back, in order, and drops only what a close still cannot write", async () => {
    const store = await storeWith(on());
    let down = true;
    let attempts = 0;
    const outage = appending(store, (rows) => {
      attempts++;
      return down
        ? Promise.reject(new StoreError("unavailable", "Cannot reach the PostgreSQL store"))
        : store.appendDecisions(rows);
    });
    const told: DecisionsDroppedEvent[] = [];
    const log = await DecisionLog.open(outage, { flushMs: 1, retryMs: 1, onDropped: (e) => told.push(e) });
    const dispatcher = dispatcherWith(log);
    for (const runId of ["run-1", "run-2", "run-3"]) await call(dispatcher, runId);
    await vi.waitFor(() => expect(attempts).toBeGreaterThanOrEqual(3), { timeout: 10_000, interval: 1 });
    expect(log.stats()).toMatchObject({ recorded: 3, written: 0, droppedFailed: 0, pending: 3 });
    expect(log.stats().requeued).toBeGreaterThanOrEqual(3);
    down = false;
    await vi.waitFor(() => expect(log.stats().written).toBe(3), { timeout: 10_000, interval: 1 });
    expect((await store.decisions({ tenantId: TENANT })).map((r) => r.runId)).toEqual(["run-1", "run-2", "run-3"]);
    expect(told).toEqual([]);

    // Down again at close: a close writes once more, then drops and counts what the store still refuses.
    down = true;
    await call(dispatcher, "run-4");
    await log.close();
    expect(log.stats()).toMatchObject({ recorded: 4, written: 3, droppedFailed: 1, pending: 0 });
    expect(told).toEqual([{ type: "decisionlog.dropped", reason: "failed", count: 1 }]);
  });

  it("drops a batch the store refuses for good at once", async () => {
    const store = await storeWith(on());
    let attempts = 0;
    const full = appending(store, () => {
      attempts++;
      return Promise.reject(new StoreError("full", "The disk is full"));
    });
    const log = await DecisionLog.open(full, { flushMs: 1, retryMs: 1 });
    await call(dispatcherWith(log), "run-g");
    await vi.waitFor(() => expect(log.stats().droppedFailed).toBe(1), { timeout: 10_000, interval: 1 });
    expect(attempts).toBe(1);
    expect(log.stats()).toMatchObject({ requeued: 0, pending: 0 });
    await log.close();
  });

  it("keeps a decision when the sink throws", async () => {
    const throwing: DecisionSink = {
      sampled: () => true,
      record: (_entry: DecisionEntry) => {
        throw new Error("sink down");
      },
    };
    const { decision } = await call(dispatcherWith(throwing), "run-t");
    expect(decision.type).toBe("block");
    const refusing: DecisionSink = {
      sampled: () => {
        throw new Error("no");
      },
      record: () => expect.unreachable(),
    };
    expect((await call(dispatcherWith(refusing), "run-u")).decision.type).toBe("block");
  });

  it("applies retention by count: a tenant cannot grow its log past `retain` (plus one batch)", async () => {
    const store = await storeWith(on({ retain: 3 }));
    const log = await DecisionLog.open(store, { pruneMs: 0, batchSize: 2, flushMs: 1 });
    const dispatcher = dispatcherWith(log);
    for (let i = 0; i < 12; i++) await call(dispatcher, `run-${i}`);
    await log.close();
    const rows = await store.decisions({ tenantId: TENANT });
    expect(rows.length).toBeLessThanOrEqual(3);
    expect(rows.at(-1)?.runId).toBe("run-11");
  });

  it("samples runs by a stable hash of the run id, close to the asked share", () => {
    const ids = Array.from({ length: 10_000 }, (_, i) => `run_${i}`);
    const picked = ids.filter((id) => sampledRun(id, 0.25)).length;
    expect(picked).toBeGreaterThan(2_300);
    expect(picked).toBeLessThan(2_700);
    expect(ids.filter((id) => sampledRun(id, 0.25)).length).toBe(picked);
    expect(runShare("run_1")).toBe(runShare("run_1"));
    expect(sampledRun("anything", 1)).toBe(true);
  });

  it("refuses bad writer options naming them", async () => {
    const store = await storeWith(null);
    await expect(DecisionLog.open(store, { bufferSize: 0 })).rejects.toThrow(/bufferSize/);
    await expect(DecisionLog.open(store, { all: { sample: 2 } })).rejects.toThrow(/sample/);
    await expect(DecisionLog.open(store, { all: { mask: [{ path: "password", action: "drop" }] } })).rejects.toThrow(
      /mask path/,
    );
  });
});

describe("tenant ids in the log", () => {
  it("keeps tenants apart", async () => {
    const store = await storeWith(on());
    const log = await DecisionLog.open(store);
    await call(dispatcherWith(log), "run-1");
    await log.close();
    expect(await store.decisions({ tenantId: TenantId.parse("globex") })).toEqual([]);
  });
});
