import { describe, expect, it } from "vitest";
import { LONG_CALL_MS, LONG_TENANT_MS, LongCallTenants } from "../../../sandbox/supervisor/long-calls.js";
import type { SandboxResult } from "../../../src/protocol/index.js";

const replied = (cpuMs: number, runMs: number, extra: Partial<SandboxResult> = {}): SandboxResult =>
  ({ type: "replied", reply: "{}", cpuMs, runMs, ...extra }) as SandboxResult;

describe("which tenants go to the long-call worker", () => {
  it("moves a tenant by the CPU its call used, not by the wall time a busy machine stretched it to", () => {
    const long = new LongCallTenants();
    long.settled("starved", replied(1, 400), 0);
    expect(long.isLong("starved", 1)).toBe(false);
    long.settled("spinner", replied(LONG_CALL_MS, LONG_CALL_MS), 0);
    expect(long.isLong("spinner", 1)).toBe(true);
    expect(long.isLong("neighbour", 1)).toBe(false);
  });

  it("moves a tenant whose own failure caused a slow reload, not one whose first load was slow", () => {
    const long = new LongCallTenants();
    long.settled("first", replied(0.1, 0.2, { loadMs: 900 }), 0);
    long.settled("reloader", replied(0.1, 0.2, { loadMs: 900, loadAfterRecycle: true }), 0);
    expect(long.isLong("first", 1)).toBe(false);
    expect(long.isLong("reloader", 1)).toBe(true);
  });

  it("moves it back after a quiet term, renewed by each long call", () => {
    const long = new LongCallTenants();
    long.settled("spinner", replied(50, 75), 0);
    long.settled("spinner", replied(50, 75), 30_000);
    expect(long.isLong("spinner", LONG_TENANT_MS + 1)).toBe(true);
    expect(long.isLong("spinner", 30_000 + LONG_TENANT_MS)).toBe(false);
  });

  it("remembers a bounded number of tenants however many ids a caller invents, forgetting the oldest", () => {
    const long = new LongCallTenants();
    for (let i = 0; i <= 10_000; i++) long.settled(`t${i}`, replied(50, 75), i);
    expect(long.isLong("t0", 10_001)).toBe(false);
    expect(long.isLong("t1", 10_001)).toBe(true);
    expect(long.isLong("t10000", 10_001)).toBe(true);
  });
});
