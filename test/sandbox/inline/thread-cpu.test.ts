import { describe, expect, it } from "vitest";
import { CallClock, FRESH_READING_MS } from "../../../sandbox/worker/thread-cpu.js";

/** A thread whose CPU clock the test advances, counting the reads the clock makes of it. */
function thread() {
  const state = { cpuMs: 100, reads: 0 };
  const clock = new CallClock(() => {
    state.reads++;
    return state.cpuMs;
  });
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

  it("never starts a call before the thread's true start, so no call is charged CPU it did not use", () => {
    const { state, clock } = thread();
    let now = 0;
    clock.start(now);
    // The thread runs a share of each step (never more than the clock), calls start at random moments.
    for (let step = 0; step < 1_000; step++) {
      const wallMs = (step % 7) * 0.1;
      now += wallMs;
      state.cpuMs += wallMs * ((step * 37) % 11) * 0.1;
      const start = clock.start(now);
      expect(start).toBeGreaterThanOrEqual(state.cpuMs - 1e-9);
      if (step % 5 === 0) clock.end(now);
    }
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
