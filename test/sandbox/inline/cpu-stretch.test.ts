import { describe, expect, it } from "vitest";
import {
  callBackstopMs,
  type ProcFile,
  StretchReadings,
  wallBackstopFactor,
} from "../../../sandbox/worker/cpu-stretch.js";
import { MAX_WALL_BACKSTOP_FACTOR, MIN_WALL_BACKSTOP_FACTOR } from "../../../src/protocol/index.js";

/** Fake /proc files whose next contents the test sets. */
function machine(cores = 2) {
  const state = { runnable: 1, runNs: 0, waitNs: 0 };
  const loadavg: ProcFile = { read: () => `0.50 0.40 0.30 ${state.runnable}/312 4242\n` };
  const schedstat: ProcFile = { read: () => `${state.runNs} ${state.waitNs} 17\n` };
  return { state, readings: new StretchReadings(loadavg, schedstat, cores) };
}

describe("the wall-clock backstop sized by the machine's load", () => {
  it("is the minimum on an idle machine: a spinning hook is stopped at 1.5 × its timeout", () => {
    const { readings } = machine();
    expect(readings.factor(0)).toBe(MIN_WALL_BACKSTOP_FACTOR);
  });

  it("grows with the runnable threads per core, up to the maximum", () => {
    const { state, readings } = machine(2);
    state.runnable = 3; // three threads wanting two cores: each gets two thirds of one
    expect(readings.factor(0)).toBeCloseTo(1.5 * 1.5);
    state.runnable = 40;
    expect(readings.factor(100)).toBe(MAX_WALL_BACKSTOP_FACTOR);
  });

  it("grows with this thread's own wait for a core, even when the machine-wide count looks idle", () => {
    const { state, readings } = machine(2);
    state.runNs = 10e6;
    state.waitNs = 10e6; // since the last reading: 10 ms on a core, 10 ms waiting for one
    expect(readings.factor(0)).toBeCloseTo(2 * 1.5);
  });

  it("ignores a thread that hardly ran since the last reading", () => {
    const { state, readings } = machine(2);
    state.runNs = 0.1e6;
    state.waitNs = 0.5e6;
    expect(readings.factor(0)).toBe(MIN_WALL_BACKSTOP_FACTOR);
  });

  it("reads again only every 10 ms, rises at once and falls by half the difference per reading", () => {
    const { state, readings } = machine(1);
    expect(readings.factor(0)).toBe(MIN_WALL_BACKSTOP_FACTOR);
    state.runnable = 3; // stretch 3
    expect(readings.factor(5)).toBe(MIN_WALL_BACKSTOP_FACTOR); // within 10 ms: the last reading
    expect(readings.factor(10)).toBeCloseTo(4.5);
    state.runnable = 1;
    expect(readings.factor(20)).toBeCloseTo(3); // (3 + 1) / 2 × 1.5
    expect(readings.factor(30)).toBeCloseTo(2.25); // (2 + 1) / 2 × 1.5
  });

  it("takes the maximum for readings that make no sense, and forgets them within a few readings", () => {
    const loadavg: ProcFile = { read: () => "garbage" };
    const schedstat: ProcFile = { read: () => "0 0 0" };
    const readings = new StretchReadings(loadavg, schedstat, 2);
    expect(readings.factor(0)).toBe(MAX_WALL_BACKSTOP_FACTOR);
    const { state, readings: spiked } = machine(1);
    state.runnable = 1e9;
    expect(spiked.factor(0)).toBe(MAX_WALL_BACKSTOP_FACTOR);
    state.runnable = 1;
    for (let at = 10; at <= 60; at += 10) spiked.factor(at);
    expect(spiked.factor(70)).toBeLessThan(1.1 * MIN_WALL_BACKSTOP_FACTOR);
  });

  it("reads this machine's /proc within its bounds", () => {
    const factor = wallBackstopFactor();
    expect(factor).toBeGreaterThanOrEqual(MIN_WALL_BACKSTOP_FACTOR);
    expect(factor).toBeLessThanOrEqual(MAX_WALL_BACKSTOP_FACTOR);
  });

  it("gives a decision call its timeout × the factor in whole ms, and an observer the minimum whatever the load", () => {
    const now = performance.now();
    const factor = wallBackstopFactor(now);
    expect(callBackstopMs({ timeoutMs: 33 }, now)).toBe(Math.ceil(33 * factor));
    expect(Number.isInteger(callBackstopMs({ timeoutMs: 33 }, now))).toBe(true);
    expect(callBackstopMs({ timeoutMs: 40, priority: "observe" }, now)).toBe(40 * MIN_WALL_BACKSTOP_FACTOR);
  });
});
