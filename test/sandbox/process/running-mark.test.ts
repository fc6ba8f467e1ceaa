import { describe, expect, it } from "vitest";
import { monotonicMs, RUNNING_MARK_BYTES, readRunningMark, writeRunningMark } from "../../../src/protocol/index.js";

describe("running-call mark", () => {
  it("reads back what was written, phase included", () => {
    const view = new Float64Array(RUNNING_MARK_BYTES / 8);
    const at = monotonicMs();
    writeRunningMark(view, 41, at, "load");
    expect(readRunningMark(view)).toEqual({ id: 41, startedAt: at, phase: "load" });
    writeRunningMark(view, 42, at + 1, "run");
    expect(readRunningMark(view)).toEqual({ id: 42, startedAt: at + 1, phase: "run" });
  });

  it("reads nothing from a fresh file or from garbage", () => {
    expect(readRunningMark(new Float64Array(3))).toBeUndefined();
    for (const bad of [
      [-1, 5, 0],
      [1.5, 5, 0],
      [Number.NaN, 5, 0],
      [2 ** 53, 5, 0],
      [1, Number.POSITIVE_INFINITY, 0],
      [1, 5, 2],
      [1, 5, Number.NaN],
    ]) {
      expect(readRunningMark(Float64Array.from(bad))).toBeUndefined();
    }
  });

  it("keeps one monotonic clock across calls", () => {
    const a = monotonicMs();
    const b = monotonicMs();
    expect(b).toBeGreaterThanOrEqual(a);
    expect(a).toBeGreaterThan(0);
  });
});
