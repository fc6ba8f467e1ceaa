import { describe, expect, it } from "vitest";
import {
  type ComparedCall,
  compareShadow,
  formatShadowReport,
  type ShadowPair,
} from "../../src/cli/shadow-comparison.js";

const decided = (version: number, result: { type: string } | null, runMs = 1): ComparedCall => ({
  bundle: { version },
  outcome: { type: "decided", result },
  runMs,
});
const failed = (version: number, code: string, runMs = 50): ComparedCall => ({
  bundle: { version },
  outcome: { type: "failed", failure: { code, message: `it ${code}` } },
  runMs,
});
const pair = (record: ComparedCall | undefined, shadow: ComparedCall, i = 0): ShadowPair => ({
  runId: `run-${i}`,
  turn: 1,
  point: record === undefined ? "tool.result" : "tool.call",
  event: { i },
  record,
  shadow,
});

describe("the shadow comparison", () => {
  it("counts agreement by result (key order aside) and by failure code, per point and by result type", () => {
    const report = compareShadow("acme", [
      pair(decided(1, null), decided(2, null)),
      pair(
        decided(1, { type: "rewrite", a: 1, b: 2 } as { type: string }),
        decided(2, { b: 2, type: "rewrite", a: 1 } as { type: string }),
      ),
      pair(failed(1, "timeout"), failed(2, "timeout")),
      pair(decided(1, null), decided(2, { type: "block" })),
      pair(decided(1, { type: "block" }), failed(2, "threw")),
      pair(undefined, decided(2, { type: "patch" })),
      pair(undefined, decided(2, null)),
    ]);
    expect(report).toMatchObject({
      shadowVersions: [2],
      activeVersions: [1],
      compared: 7,
      agreed: 4,
      differed: 3,
      byPoint: {
        "tool.call": { compared: 5, agreed: 3, differed: 2 },
        "tool.result": { compared: 2, agreed: 1, differed: 1 },
      },
      byResultType: { "noop → block": 1, "block → failed:threw": 1, "noop → patch": 1 },
      failures: { active: { timeout: 1 }, shadow: { timeout: 1, threw: 1 } },
    });
    expect(report.differences.map((d) => [d.active.key, d.shadow.key, d.active.version])).toEqual([
      ["noop", "block", 1],
      ["block", "failed:threw", 1],
      ["noop", "patch", null],
    ]);
    expect(formatShadowReport(report)).toContain("7 calls compared: 4 agreed, 3 differed");
  });

  it("gives each side's run time p50 and p99 and keeps the first five differences", () => {
    const pairs = Array.from({ length: 100 }, (_, i) =>
      pair(decided(1, null, i + 1), decided(2, { type: "block" }, 2 * (i + 1)), i),
    );
    const report = compareShadow("acme", pairs);
    expect(report.cost).toEqual({ active: { p50: 50, p99: 99 }, shadow: { p50: 100, p99: 198 } });
    expect(report.differences.map((d) => d.runId)).toEqual(["run-0", "run-1", "run-2", "run-3", "run-4"]);
  });

  it("keeps tenant text on its line in the text report", () => {
    const report = compareShadow("acme", [
      pair(decided(1, null), decided(2, { type: "block", reason: "a\nb\u001b[2J" } as { type: string })),
    ]);
    const text = formatShadowReport(report);
    expect(text).not.toContain("\u001b");
    expect(text).toContain("\\n");
  });
});
