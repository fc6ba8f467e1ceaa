import { afterEach, describe, expect, it, vi } from "vitest";
import { wallBackstopFactor } from "../../../sandbox/worker/cpu-stretch.js";
import { IsolatePool, PoolClosedError, SandboxOptionsError } from "../../../sandbox/worker/index.js";
import { isolateMaker } from "../../../sandbox/worker/isolate-maker.js";
import { SPARES_PER_KIND } from "../../../sandbox/worker/spare-isolates.js";
import { GuestReply, type SandboxBundle, type SandboxResult } from "../../../src/protocol/index.js";
import { ctxJson, HEALTHY, hooksBundle, POOL_LIMITS, TOOL_CALL_EVENT, tenant } from "../bundle-fixtures.js";

const LIMITS = POOL_LIMITS;
const COUNTER = hooksBundle(`{ toolCall(event) {
  if (event.loop) for (;;) {}
  globalThis.n = (globalThis.n || 0) + 1;
  return { type: "block", reason: String(globalThis.n) };
} }`);

let pools: IsolatePool[] = [];
afterEach(() => {
  for (const pool of pools) pool.dispose();
  pools = [];
});

function poolWith(options: ConstructorParameters<typeof IsolatePool>[0] = {}): IsolatePool {
  const pool = new IsolatePool(options);
  pools.push(pool);
  pool.load(COUNTER.hash, COUNTER.code, LIMITS);
  pool.load(HEALTHY.hash, HEALTHY.code, LIMITS);
  return pool;
}

/** One `tool.call` of a loaded bundle by a tenant, with a 1 s timeout. */
function callBundle(pool: IsolatePool, bundle: SandboxBundle, tenantName: string, eventJson = "{}"): SandboxResult {
  const tenantId = tenant(tenantName);
  return pool.call(bundle.hash, {
    tenantId,
    point: "tool.call",
    eventJson,
    ctxJson: ctxJson(tenantId, bundle),
    timeoutMs: 1_000,
  });
}

function callCounter(pool: IsolatePool, tenantName: string, event: object = TOOL_CALL_EVENT): SandboxResult {
  return callBundle(pool, COUNTER, tenantName, JSON.stringify(event));
}

/** A tenant's calls of the counter bundle with a 40 ms timeout, spinning when `loop`. */
function counterLoop(pool: IsolatePool, tenantName: string): (loop: boolean) => SandboxResult {
  const tenantId = tenant(tenantName);
  return (loop) =>
    pool.call(COUNTER.hash, {
      tenantId,
      point: "tool.call",
      eventJson: JSON.stringify({ ...TOOL_CALL_EVENT, loop }),
      ctxJson: ctxJson(tenantId, COUNTER),
      timeoutMs: 40,
    });
}

/** The reason the counter bundle returned: how many calls this isolate has seen. */
function count(result: SandboxResult): string {
  if (result.type !== "replied") return `${result.type}:${result.failure.code}`;
  const reply = GuestReply.parse(JSON.parse(result.reply));
  return reply.kind === "returned" ? String((reply.result as { reason?: unknown }).reason) : `failed:${reply.code}`;
}

describe("IsolatePool", () => {
  it("validates its options with messages that name the option and the value", () => {
    expect(() => new IsolatePool({ maxIsolates: 0 })).toThrow(
      new SandboxOptionsError("Expected `maxIsolates` to be an integer from 1 and up, got `0`"),
    );
    expect(() => new IsolatePool({ maxHeapMb: 4 })).toThrow(
      "Expected `maxHeapMb` to be an integer from 8 and up, got `4`",
    );
    expect(() => new IsolatePool({ maxIdleMs: 1.5 })).toThrow(SandboxOptionsError);
  });

  it("refuses a memory limit under isolated-vm's minimum of 8 MB", () => {
    const pool = poolWith();
    expect(() => pool.load(HEALTHY.hash, HEALTHY.code, { ...LIMITS, memoryMb: 4 })).toThrow(SandboxOptionsError);
  });

  it("gives hooks the whole console surface; counters and timers are no-ops", () => {
    const pool = poolWith();
    const chatty = hooksBundle(`{ toolCall() {
      console.dir({ a: 1 }); console.table([1]); console.group("g"); console.groupEnd(); console.count(); console.time("t");
      console.timeEnd("t"); console.assert(true, "fine"); console.assert(false, "broken", 2); console.trace("here");
      return { type: "block", reason: "ok" };
    } }`);
    pool.load(chatty.hash, chatty.code, { ...LIMITS, maxLogLines: 10 });
    const result = callBundle(pool, chatty, "a");
    expect(result.type === "replied" && JSON.parse(result.reply)).toMatchObject({
      kind: "returned",
      logs: ['{"a":1}', "[1]", "g", "[assert] Assertion failed: broken 2", "[trace] here"],
    });
  });

  it("refuses a timeout that isolated-vm would read as none", () => {
    const pool = poolWith();
    const tenantId = tenant("a");
    const call = { tenantId, point: "tool.call", eventJson: "{}", ctxJson: "{}" };
    for (const timeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => pool.call(COUNTER.hash, { ...call, timeoutMs })).toThrow(SandboxOptionsError);
    }
    expect(() => pool.describe(tenantId, COUNTER.hash, 0)).toThrow(SandboxOptionsError);
  });

  it("keeps one warm isolate per tenant and bundle", () => {
    const pool = poolWith();
    expect([count(callCounter(pool, "a")), count(callCounter(pool, "a")), count(callCounter(pool, "b"))]).toEqual([
      "1",
      "2",
      "1",
    ]);
    expect(pool.stats()).toMatchObject({ isolates: 2, bundles: 2, recycled: 0, evicted: 0 });
  });

  it("fails calls for an unknown bundle or point as unavailable", () => {
    const pool = poolWith();
    const tenantId = tenant("a");
    const base = { tenantId, eventJson: "{}", ctxJson: ctxJson(tenantId, COUNTER), timeoutMs: 100 };
    const other = hooksBundle("{}");
    expect(pool.call(other.hash, { ...base, point: "tool.call" })).toMatchObject({
      type: "failed",
      failure: { code: "unavailable" },
    });
    expect(pool.call(COUNTER.hash, { ...base, point: "tool.nope" })).toMatchObject({
      type: "failed",
      failure: { code: "unavailable" },
    });
  });

  it("disposes an isolate after a timeout and recreates it on the next call", () => {
    const pool = poolWith();
    expect(count(callCounter(pool, "a"))).toBe("1");
    expect(callCounter(pool, "a", { ...TOOL_CALL_EVENT, loop: true })).toMatchObject({
      type: "failed",
      failure: { code: "timeout" },
    });
    expect(count(callCounter(pool, "a"))).toBe("1");
    expect(pool.stats()).toMatchObject({ recycled: 1, isolates: 1 });
  });

  it("stops a spinning call when its thread's CPU time reaches the timeout, not at the backstop", async () => {
    const call = counterLoop(poolWith(), "spin-cpu");
    call(false);
    // The guard's watcher thread starts with the first pool; a spin before it runs meets the backstop.
    const byCpu = (r: SandboxResult) => r.type === "failed" && r.failure.message.endsWith("(CPU time)");
    let spun = call(true);
    for (let i = 0; i < 8 && !(byCpu(spun) && spun.cpuMs < 40 * 1.5); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      spun = call(true);
    }
    expect(spun).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    expect(byCpu(spun)).toBe(true);
    // Stopped near 40 ms of CPU: the backstop (1.5–5 × by load) would have let it use 60 ms or more.
    expect(spun.cpuMs).toBeGreaterThanOrEqual(40);
    expect(spun.cpuMs).toBeLessThan(40 * 1.5);
    expect(count(call(false))).toBe("1");
  });

  it("without the CPU guard, stops a spinning call at the wall-clock backstop the machine's load sets", () => {
    const call = counterLoop(poolWith({ cpuGuard: false }), "spin");
    call(false); // loads the bundle, so that the spinning call starts within the 10 ms the reading is kept
    const factor = wallBackstopFactor();
    const spun = call(true);
    expect(spun).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    // At the factor read (1.5 on an idle machine), not at a fixed 5 × the timeout; late by what load adds.
    expect(spun.runMs).toBeGreaterThanOrEqual(factor * 40 * 0.95);
    expect(spun.runMs).toBeLessThan(factor * 40 + 250);
    if (spun.runMs < 1.5 * factor * 40) expect(spun.cpuMs).toBeGreaterThan(40);
  });

  it("evicts the least recently used isolate past maxIsolates", () => {
    const pool = poolWith({ maxIsolates: 2 });
    callCounter(pool, "a");
    callCounter(pool, "b");
    callCounter(pool, "a");
    const evicting = callCounter(pool, "c"); // evicts b, the least recently used
    expect(pool.stats()).toMatchObject({ isolates: 2, evicted: 1 });
    // The call that made room says so (`evicted`); a warm call evicts nothing and carries no count.
    expect(evicting).toMatchObject({ type: "replied", evicted: 1 });
    const warm = callCounter(pool, "a");
    expect(warm.evicted).toBeUndefined();
    expect(count(warm)).toBe("3");
    expect(count(callCounter(pool, "b"))).toBe("1");
  });

  it("evicts least recently used isolates past the heap budget", () => {
    const pool = poolWith({ maxHeapMb: 8 });
    // 24 isolates hold well over 8 MB on every V8 here (≈ 0.8 MB each on Node 20, ≈ 0.6 MB on Node 24).
    let reported = 0;
    for (let i = 0; i < 24; i++) reported += callCounter(pool, `t${i}`).evicted ?? 0;
    const stats = pool.stats();
    expect(stats.evicted).toBeGreaterThan(0);
    // Every eviction is reported by the call that caused it, and no other.
    expect(reported).toBe(stats.evicted);
    expect(stats.isolates).toBeLessThan(24);
    expect(stats.heapBytes).toBeLessThanOrEqual(8 * 1024 * 1024);
  });

  it("sweeps isolates idle past maxIdleMs", () => {
    let now = 0;
    const pool = poolWith({ maxIdleMs: 1_000, now: () => now });
    callCounter(pool, "a");
    now = 600;
    callCounter(pool, "b");
    now = 1_500;
    expect(pool.sweep()).toBe(1);
    expect(pool.stats()).toMatchObject({ isolates: 1, evicted: 1 });
    expect(count(callCounter(pool, "b"))).toBe("2");
  });

  it("recycles a bundle's isolates when it is loaded with other limits, and unload forgets it", () => {
    const pool = poolWith();
    callCounter(pool, "a");
    pool.load(COUNTER.hash, COUNTER.code, LIMITS);
    expect(count(callCounter(pool, "a"))).toBe("2");
    pool.load(COUNTER.hash, COUNTER.code, { ...LIMITS, maxLogLines: 9 });
    expect(count(callCounter(pool, "a"))).toBe("1");
    pool.unload(COUNTER.hash);
    expect(pool.isLoaded(COUNTER.hash)).toBe(false);
    expect(callCounter(pool, "a")).toMatchObject({ type: "failed", failure: { code: "unavailable" } });
  });

  it("describes in a throwaway isolate, leaving the warm ones alone", () => {
    const pool = poolWith();
    callCounter(pool, "a");
    const described = pool.describe(tenant("a"), COUNTER.hash);
    expect(described.type === "replied" && JSON.parse(described.reply)).toEqual({
      kind: "described",
      handlers: [{ name: "toolCall", type: "function" }],
    });
    expect(pool.stats().isolates).toBe(1);
    expect(count(callCounter(pool, "a"))).toBe("2");
  });

  it("measures CPU time in the isolate and wall time around the call", () => {
    const pool = poolWith();
    const busy = hooksBundle(
      "{ toolCall() { let x = 0; for (let i = 0; i < 2e6; i++) x += i; return { type: 'block', reason: String(x) }; } }",
    );
    pool.load(busy.hash, busy.code, LIMITS);
    const tenantId = tenant("a");
    const result = pool.call(busy.hash, {
      tenantId,
      point: "tool.call",
      eventJson: "{}",
      ctxJson: ctxJson(tenantId, busy),
      timeoutMs: 2_000,
    });
    expect(result.type).toBe("replied");
    expect(result.cpuMs).toBeGreaterThan(0);
    expect(result.runMs).toBeGreaterThan(0);
  });

  it("keeps prepared spare isolates for tenants' first calls, refilled between calls", async () => {
    const pool = poolWith();
    callCounter(pool, "a");
    expect(pool.stats().spares).toBe(0);
    await vi.waitFor(() => expect(pool.stats().spares).toBe(SPARES_PER_KIND), { timeout: 10_000, interval: 5 });
    expect(SPARES_PER_KIND).toBeGreaterThan(1);
    // Back-to-back first calls each take a spare; none waits for quiet to be replaced.
    expect(count(callCounter(pool, "b"))).toBe("1");
    expect(count(callCounter(pool, "c"))).toBe("1");
    expect(pool.stats().spares).toBe(SPARES_PER_KIND - 2);
    await vi.waitFor(() => expect(pool.stats()).toMatchObject({ spares: SPARES_PER_KIND, isolates: 3 }), {
      timeout: 10_000,
      interval: 5,
    });
    const without = poolWith({ spare: false });
    callCounter(without, "a");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(without.stats().spares).toBe(0);
  });

  it("runs no tenant code in a spare before it is taken, and a spare's prelude answers like a fresh one", async () => {
    const pool = poolWith();
    await vi.waitFor(() => expect(pool.stats().spares).toBe(SPARES_PER_KIND), { timeout: 10_000, interval: 5 });
    // The counter bundle counts in globalThis: a spare shared or pre-loaded with tenant code would show it.
    for (const name of ["s1", "s2", "s3", "s4"]) expect(count(callCounter(pool, name))).toBe("1");
  });

  it("hands a tenant in a spare nothing of the isolated-vm library its maker isolate holds", async () => {
    const probe = hooksBundle(`{ toolCall() {
      const library = ["ivm", "isolated_vm", "Isolate", "Reference", "ExternalCopy", "Callback", "NativeModule", "Context", "Script"];
      const names = library.filter((n) => n in globalThis);
      return { type: "block", reason: [typeof ivm, typeof globalThis.ivm, typeof require, names.join("+")].join(",") };
    } }`);
    const pool = poolWith();
    pool.load(probe.hash, probe.code, LIMITS);
    await vi.waitFor(() => expect(pool.stats().spares).toBe(SPARES_PER_KIND), { timeout: 10_000, interval: 5 });
    const result = callBundle(pool, probe, "spare-probe");
    expect(pool.stats().spares).toBe(SPARES_PER_KIND - 1);
    expect(count(result)).toBe("undefined,undefined,undefined,");
  });

  it("closes while spares are being made, resolving only once no isolate is being made", async () => {
    // A process that exits while isolated-vm makes an isolate on its threads can crash (rule 11).
    let busy = 0;
    for (let round = 0; round < 20; round++) {
      const pool = new IsolatePool();
      pool.load(COUNTER.hash, COUNTER.code, LIMITS);
      await new Promise((resolve) => setTimeout(resolve, round % 4));
      await pool.close();
      let idle = false;
      void isolateMaker.settled().then(() => {
        idle = true;
      });
      await Promise.resolve();
      if (!idle) busy++;
      expect(pool.stats().spares).toBe(0);
      expect(() => callCounter(pool, "late")).toThrow(PoolClosedError);
    }
    expect(busy).toBe(0);
  });

  it("tells its phase listener when a cold call loads its bundle and when the handler starts", () => {
    const pool = poolWith();
    const tenantId = tenant("a");
    const phases: string[] = [];
    const call = () =>
      pool.call(
        COUNTER.hash,
        {
          tenantId,
          point: "tool.call",
          eventJson: JSON.stringify(TOOL_CALL_EVENT),
          ctxJson: ctxJson(tenantId, COUNTER),
          timeoutMs: 1_000,
        },
        (phase) => phases.push(phase),
      );
    const cold = call();
    const warm = call();
    expect(phases).toEqual(["load", "run"]);
    expect(cold.loadMs).toBeGreaterThan(0);
    expect(warm.loadMs).toBeUndefined();
  });

  it("throws PoolClosedError after dispose", () => {
    const pool = poolWith();
    pool.dispose();
    expect(() => callCounter(pool, "a")).toThrow(PoolClosedError);
    expect(() => pool.load(COUNTER.hash, COUNTER.code, LIMITS)).toThrow(PoolClosedError);
    pool.dispose();
  });
});
