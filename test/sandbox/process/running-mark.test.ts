import { describe, expect, it } from "vitest";
import {
  MAX_MARK_MATES,
  monotonicMs,
  RUNNING_MARK_BYTES,
  readRunningMark,
  writeRunningMark,
} from "../../../src/protocol/index.js";

describe("running-call mark", () => {
  it("reads back what was written, phase included", () => {
    const view = new Float64Array(RUNNING_MARK_BYTES / 8);
    const at = monotonicMs();
    writeRunningMark(view, 41, at, "load");
    expect(readRunningMark(view)).toEqual({ id: 41, startedAt: at, phase: "load", mates: [] });
    writeRunningMark(view, 42, at + 1, "run", [43, 45]);
    expect(readRunningMark(view)).toEqual({ id: 42, startedAt: at + 1, phase: "run", mates: [43, 45] });
    // A shorter list over a longer one: only the count written counts.
    writeRunningMark(view, 46, at + 2, "run", [47]);
    expect(readRunningMark(view)?.mates).toEqual([47]);
  });

  it("keeps at most MAX_MARK_MATES mates", () => {
    const view = new Float64Array(RUNNING_MARK_BYTES / 8);
    const many = Array.from({ length: MAX_MARK_MATES + 5 }, (_, i) => i + 2);
    writeRunningMark(view, 1, monotonicMs(), "run", many);
    expect(readRunningMark(view)?.mates).toEqual(many.slice(0, MAX_MARK_MATES));
  });

  it("reads nothing from a fresh file or from garbage", () => {
    expect(readRunningMark(new Float64Array(RUNNING_MARK_BYTES / 8))).toBeUndefined();
    for (const bad of [
      [-1, 5, 0, 0],
      [1.5, 5, 0, 0],
      [Number.NaN, 5, 0, 0],
      [2 ** 53, 5, 0, 0],
      [1, Number.POSITIVE_INFINITY, 0, 0],
      [1, 5, 2, 0],
      [1, 5, Number.NaN, 0],
      // A mate count out of range, or a mate that is no call id.
      [1, 5, 0, -1],
      [1, 5, 0, 1.5],
      [1, 5, 0, MAX_MARK_MATES + 1],
      [1, 5, 0, 1, -3],
      [1, 5, 0, 2, 4, Number.NaN],
    ]) {
      const view = new Float64Array(RUNNING_MARK_BYTES / 8);
      view.set(bad);
      expect(readRunningMark(view)).toBeUndefined();
    }
  });

  it("keeps one monotonic clock across calls", () => {
    const a = monotonicMs();
    const b = monotonicMs();
    expect(b).toBeGreaterThanOrEqual(a);
    expect(a).toBeGreaterThan(0);
  });
});
