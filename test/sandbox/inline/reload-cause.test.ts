import { afterEach, describe, expect, it } from "vitest";
import { IsolatePool } from "../../../sandbox/worker/index.js";
import type { SandboxBundle, SandboxResult } from "../../../src/protocol/index.js";
import { hookCall, hooksBundle, POOL_LIMITS, TOOL_CALL_EVENT, tenant } from "../bundle-fixtures.js";

/** Fails on demand in the two ways that recycle an isolate: a timeout, a rejection left behind. */
const FLAKY = hooksBundle(`{ toolCall(event) {
  if (event.loop) for (;;) {}
  if (event.reject) Promise.reject(new Error("nobody listens"));
  return undefined;
} }`);
const BROKEN_LOAD = hooksBundle("{ toolCall() {} }", 'throw new Error("no config");');

let pools: IsolatePool[] = [];
afterEach(() => {
  for (const pool of pools) pool.dispose();
  pools = [];
});

function poolWith(options: ConstructorParameters<typeof IsolatePool>[0] = {}): IsolatePool {
  const pool = new IsolatePool({ spare: false, ...options });
  pools.push(pool);
  pool.load(FLAKY.hash, FLAKY.code, POOL_LIMITS);
  pool.load(BROKEN_LOAD.hash, BROKEN_LOAD.code, POOL_LIMITS);
  return pool;
}

function call(pool: IsolatePool, tenantName: string, event: object = {}, bundle: SandboxBundle = FLAKY): SandboxResult {
  const [, sandboxCall] = hookCall(tenant(tenantName), bundle, {
    event: { ...TOOL_CALL_EVENT, ...event },
    timeoutMs: 20,
  });
  return pool.call(bundle.hash, sandboxCall);
}

/** How the call's load went: none (warm), a load that is not the tenant's doing, or one that is. */
function load(result: SandboxResult): "warm" | "load" | "own load" {
  if (result.loadMs === undefined) return "warm";
  return result.loadAfterRecycle === true ? "own load" : "load";
}

describe("which loads the isolate pool says a tenant caused", () => {
  it("marks the load after a timeout or a rejection left behind recycled the tenant's isolate", () => {
    const pool = poolWith();
    expect(load(call(pool, "a"))).toBe("load");
    expect(load(call(pool, "a"))).toBe("warm");
    expect(call(pool, "a", { loop: true })).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    expect(load(call(pool, "a"))).toBe("own load");
    expect(call(pool, "a", { reject: true })).toMatchObject({ type: "failed", failure: { code: "threw" } });
    const reloaded = call(pool, "a");
    expect(reloaded).toMatchObject({ type: "replied", loadAfterRecycle: true });
    expect(reloaded.loadMs).toBeGreaterThan(0);
    expect(load(call(pool, "a"))).toBe("warm");
  });

  it("marks the load after one that failed on the bundle's own code, not the first", () => {
    const pool = poolWith();
    const first = call(pool, "a", {}, BROKEN_LOAD);
    expect(first).toMatchObject({ type: "failed", failure: { code: "threw" } });
    expect(load(first)).toBe("load");
    const again = call(pool, "a", {}, BROKEN_LOAD);
    expect(again).toMatchObject({ type: "failed", failure: { code: "threw" }, loadAfterRecycle: true });
  });

  it("keeps a neighbour's loads unmarked: each tenant's recycles are its own", () => {
    const pool = poolWith();
    call(pool, "a");
    call(pool, "b");
    call(pool, "a", { loop: true });
    expect(load(call(pool, "b"))).toBe("warm");
    expect(load(call(pool, "a"))).toBe("own load");
  });

  it("does not mark a load after an eviction, an idle sweep or a bundle reload with other limits", () => {
    let now = 0;
    const pool = poolWith({ maxIsolates: 1, maxIdleMs: 1_000, now: () => now });
    call(pool, "a");
    call(pool, "b"); // evicts a
    expect(load(call(pool, "a"))).toBe("load");

    now = 5_000;
    expect(pool.sweep()).toBe(1);
    expect(load(call(pool, "a"))).toBe("load");

    call(pool, "a", { reject: true });
    pool.load(FLAKY.hash, FLAKY.code, { ...POOL_LIMITS, maxLogLines: 9 });
    expect(load(call(pool, "a"))).toBe("load");
  });

  it("remembers at most maxIsolates recycled tenants, forgetting the oldest", () => {
    const pool = poolWith({ maxIsolates: 2 });
    for (const name of ["a", "b", "c"]) call(pool, name, { reject: true });
    expect(load(call(pool, "a"))).toBe("load");
    expect(load(call(pool, "c"))).toBe("own load");
  });
});
