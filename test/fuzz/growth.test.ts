import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { grownEvent, growthInput, growthSeries } from "../../src/fuzz/growth-sites.js";
import { cpuStats, fitGrowth, fuzzDictionary, growsSuperLinearly, SUPER_LINEAR_SLOPE } from "../../src/fuzz/index.js";
import { seedMutationArbitrary } from "../../src/fuzz/seed-mutation.js";
import { HOOK_POINTS, type JsonValue } from "../../src/protocol/index.js";

const sizes = [256, 512, 1024, 2048, 4096, 8192];
const shell = (command: JsonValue): JsonValue => ({
  call: { id: "c1", name: "shell", args: { command } },
  batch: { index: 0, size: 1 },
});

describe("fitGrowth", () => {
  it("does not call one step up that turns linear again at the top growth", () => {
    // A linear hook measured on Node 26: one jump between 256 and 512 KiB, linear on either side.
    const points = [
      { size: 131_088, cpuMs: 0.214 },
      { size: 262_160, cpuMs: 0.423 },
      { size: 524_304, cpuMs: 2.345 },
      { size: 1_048_426, cpuMs: 4.3 },
    ];
    const fit = fitGrowth(points, 0.1, 50);
    expect(fit?.slope).toBeGreaterThanOrEqual(SUPER_LINEAR_SLOPE);
    expect(fit?.tailSlope).toBeLessThan(1);
    expect(growsSuperLinearly(fit)).toBe(false);
    const quadratic = points.map((p, i) => ({ size: p.size, cpuMs: 0.2 * 4 ** i }));
    expect(growsSuperLinearly(fitGrowth(quadratic, 0.1, 50))).toBe(true);
  });

  it("does not call a flat curve that jumps at its largest size alone growth", () => {
    // The same linear hook in a later CI run on Node 26: flat, then a collection set off by the largest event.
    const points = [
      { size: 262_144, cpuMs: 0.234 },
      { size: 524_288, cpuMs: 0.205 },
      { size: 1_048_381, cpuMs: 3.885 },
    ];
    const fit = fitGrowth(points, 0.1, 50);
    expect(fit?.slope).toBeGreaterThanOrEqual(SUPER_LINEAR_SLOPE);
    expect(fit?.tailSlope).toBeGreaterThanOrEqual(SUPER_LINEAR_SLOPE);
    expect(growsSuperLinearly(fit)).toBe(false);
    // Three quadratic points are growth: the two below the largest already bend.
    const quadratic = points.map((p, i) => ({ size: p.size, cpuMs: 0.2 * 4 ** i }));
    expect(growsSuperLinearly(fitGrowth(quadratic, 0.1, 50))).toBe(true);
  });

  it("finds a slope of 2 in quadratic times and projects where they reach the timeout", () => {
    const fit = fitGrowth(
      sizes.map((size) => ({ size, cpuMs: 1e-6 * size * size })),
      0.05,
      50,
    );
    expect(fit?.slope).toBeCloseTo(2, 5);
    // 1e-6·n² = 50 → n ≈ 7071
    expect(fit?.projectedSize).toBeGreaterThan(7000);
    expect(fit?.projectedSize).toBeLessThan(7150);
  });

  it("does not call a linear curve with a fixed cost super-linear", () => {
    const fit = fitGrowth(
      sizes.map((size) => ({ size, cpuMs: 0.05 + 1e-4 * size })),
      0.05,
      50,
    );
    expect(fit?.slope).toBeLessThan(1.05);
    expect(fit?.slope).toBeGreaterThan(0.5);
  });

  it("ignores sizes under the noise floor and needs three points above it", () => {
    const noisy = [
      { size: 16, cpuMs: 0.01 },
      { size: 32, cpuMs: 0.09 },
      { size: 64, cpuMs: 0.02 },
      { size: 128, cpuMs: 0.2 },
      { size: 256, cpuMs: 0.4 },
    ];
    expect(fitGrowth(noisy, 0.1, 50)).toBeUndefined();
    expect(fitGrowth([...noisy, { size: 512, cpuMs: 0.8 }], 0.1, 50)?.slope).toBeCloseTo(1, 5);
  });

  it("uses the largest sizes, where per-call costs no longer flatten the curve", () => {
    const points = [64, 128, 256, 512, 1024, 2048, 4096, 8192].map((size) => ({
      size,
      cpuMs: 0.3 + 1e-6 * size * size,
    }));
    expect(fitGrowth(points, 0.1, 50)?.slope).toBeGreaterThanOrEqual(SUPER_LINEAR_SLOPE);
  });
});

describe("cpuStats", () => {
  it("gives nearest-rank percentiles and the p99 as a share of the timeout", () => {
    const samples = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(cpuStats(samples, 200)).toEqual({ calls: 100, p50Ms: 50, p99Ms: 99, maxMs: 100, p99OfTimeout: 0.495 });
    expect(cpuStats([], 50)).toBeNull();
  });
});

describe("growth series", () => {
  it("repeats and pumps each string and repeats each array of a seed event, once per distinct value", () => {
    const seed = { point: "tool.call" as const, event: shell("ls -la && rm -rf ./build"), origin: "f:1" };
    const series = growthSeries([seed, { ...seed, origin: "f:2" }]);
    const command = series.filter((s) => s.path.join(".") === "call.args.command");
    expect(command.map((s) => [s.shape, s.unit])).toEqual([
      ["repeat", "ls -la && rm -rf ./build"],
      ["pump", "-"],
      ["pump", " "],
    ]);
    const pumped = command[1];
    if (!pumped) throw new Error("no pump series");
    const grown = grownEvent(pumped, 1000) as { call: { args: { command: string } } };
    expect(grown.call.args.command).toHaveLength(1000);
    expect(grown.call.args.command.startsWith("ls -la && rm---")).toBe(true);
    expect(grown.call.args.command.endsWith("--- -rf ./build")).toBe(true);
    expect(growthInput(pumped, 1000)).toMatchObject({ origin: "f:1", path: "call.args.command", size: 1000 });
    expect(growthInput(pumped, 1000).preview).toBe('"ls -la && rm" + "-"×976 + " -rf ./build"');
    // The seed itself is untouched.
    expect(seed.event).toEqual(shell("ls -la && rm -rf ./build"));
  });

  it("grows arrays by repeating their items", () => {
    const seed = { point: "tool.call" as const, event: shell(["rm", "-r"]), origin: "f:1" };
    const array = growthSeries([seed]).find((s) => s.kind === "array");
    if (!array) throw new Error("no array series");
    expect(growthInput(array, 5).path).toBe("call.args.command");
    expect((grownEvent(array, 5) as { call: { args: { command: string[] } } }).call.args.command).toEqual([
      "rm",
      "-r",
      "rm",
      "-r",
      "rm",
    ]);
  });
});

describe("fuzzDictionary", () => {
  it("takes the seeds' strings and keys and the bundle's string literals", () => {
    const code = `var x = { toolCall(e) { if (JSON.stringify(e).includes("spin")) return 'block'; } };`;
    const words = fuzzDictionary([shell("ls")], code);
    expect(words).toEqual(expect.arrayContaining(["call", "command", "shell", "ls", "spin", "block"]));
  });

  it("reads a hostile megabyte of bundle text in linear time and keeps at most 500 words", () => {
    const hostile = [`"${'\\"'.repeat(300_000)}`, `'${"a".repeat(400_000)}`, "x.y".repeat(100_000)].join("\n");
    const started = performance.now();
    const words = fuzzDictionary([], hostile);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(words.length).toBeLessThanOrEqual(500);
    expect(words.every((w) => w.length <= 200)).toBe(true);
  });
});

describe("seed mutations", () => {
  it("only produces events valid for the point, near the seed", () => {
    const seeds = [{ point: "tool.call" as const, event: shell("rm -rf /"), origin: "f:1" }];
    const arbitrary = seedMutationArbitrary("tool.call", seeds, ["shell", "bash"]);
    if (!arbitrary) throw new Error("expected an arbitrary");
    const events = fc.sample(arbitrary, { numRuns: 300, seed: 3 });
    for (const event of events) expect(HOOK_POINTS["tool.call"].event.safeParse(event).success).toBe(true);
    expect(events.some((e) => JSON.stringify(e) === JSON.stringify(seeds[0]?.event))).toBe(true);
    expect(new Set(events.map((e) => JSON.stringify(e))).size).toBeGreaterThan(50);
    expect(seedMutationArbitrary("tool.result", seeds, [])).toBeUndefined();
  });
});
