import { describe, expect, it } from "vitest";
import { CallClock, FRESH_READING_MS } from "../../../sandbox/worker/thread-cpu.js";

/** A thread whose CPU clock and event-loop sleep the test advances, counting the reads of its clock. */
function thread() {
  const state = { cpuMs: 100, idleMs: 0, reads: 0 };
  const clock = new CallClock(
    () => {
      state.reads++;
      return state.cpuMs;
    },
    () => state.idleMs,
  );
  return { state, clock };
}

describe("where a call starts on the thread's CPU clock", () => {
  it("reads the clock at a start when it has no reading yet or the last is over a millisecond old", () => {
    const { state, clock } = thread();
    expect(clock.start(0)).toBe(100);
    state.cpuMs = 103;
    expect(clock.start(FRESH_READING_MS + 2)).toBe(103);
    expect(state.reads).toBe(2);
  });

  it("starts a call within the millisecond from the last reading plus the wall time since, without a read", () => {
    const { state, clock } = thread();
    clock.start(10);
    state.cpuMs = 100.2;
    expect(clock.start(10.5)).toBeCloseTo(100.5, 9);
    expect(state.reads).toBe(1);
  });

  it("starts a call after a quiet spell from the last reading plus the time awake since, without a read", () => {
    const { state, clock } = thread();
    clock.start(10);
    // 40 ms asleep in the poll, 0.25 ms awake of which 0.2 ms on a core.
    state.idleMs = 40;
    state.cpuMs = 100.2;
    expect(clock.start(50.25)).toBeCloseTo(100.25, 9);
    expect(state.reads).toBe(1);
  });

  it("reads the clock when the thread was awake over a millisecond since the last reading", () => {
    const { state, clock } = thread();
    clock.start(10);
    state.idleMs = 40;
    state.cpuMs = 101.5;
    expect(clock.start(51.5)).toBe(101.5);
    expect(state.reads).toBe(2);
  });

  it("never starts a call before the thread's true start, so no call is charged CPU it did not use", () => {
    const { state, clock } = thread();
    let now = 0;
    clock.start(now);
    // Each step the thread sleeps in the poll a while, then runs a share of its time awake (never more than
    // the clock); calls start at varied moments.
    for (let step = 0; step < 1_000; step++) {
      const asleep = (step % 3) * 0.7;
      const awake = (step % 7) * 0.1;
      now += asleep + awake;
      state.idleMs += asleep;
      state.cpuMs += awake * ((step * 37) % 11) * 0.1;
      const start = clock.start(now);
      expect(start).toBeGreaterThanOrEqual(state.cpuMs - 1e-9);
      if (step % 5 === 0) clock.end(now);
    }
    expect(state.reads).toBeLessThan(1_000);
  });

  it("keeps the reading an end takes for the next start", () => {
    const { state, clock } = thread();
    clock.start(0);
    state.cpuMs = 160;
    expect(clock.end(60)).toBe(160);
    expect(clock.start(60.25)).toBeCloseTo(160.25, 9);
    expect(state.reads).toBe(2);
  });
});
