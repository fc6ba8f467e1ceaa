import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { compileHook, describeBundle } from "../../src/bundler/index.js";
import { parseFixtures } from "../../src/fixture-runner/index.js";
import { type FuzzTarget, huntTimeouts, type SeedEvent } from "../../src/fuzz/index.js";
import { type HookExecutor, Limits, TenantId } from "../../src/protocol/index.js";
import { toolCallFixture, writeHook } from "../gate/hook-modules.js";

/** The fork-bomb pattern of hooks/block-destructive-shell before b64efce: a 16 KB word took 610 ms. */
const QUADRATIC = "test/fixtures/fuzz/fork-bomb-quadratic";
/** The same hook after the fix (its twin). */
const FIXED = "hooks/block-destructive-shell";

let executor: HookExecutor;
let root: string;
beforeAll(async () => {
  executor = await createHookExecutor({ workers: 1, spareWorker: false });
  root = mkdtempSync(join(tmpdir(), "isohook-hunt-"));
});
afterAll(async () => {
  await executor?.close();
  rmSync(root, { recursive: true, force: true });
});

async function hunt(entry: string, timeMs = 90_000) {
  const built = await compileHook(entry, { cwd: process.cwd() });
  const target: FuzzTarget = {
    executor,
    bundle: { hash: built.hash, code: built.code },
    manifest: await describeBundle(built, executor),
    tenantId: TenantId.parse("hunt"),
    config: {},
    limits: Limits.parse({}),
  };
  const file = `${entry}/fixtures.jsonl`;
  const bases: SeedEvent[] = parseFixtures(readFileSync(file, "utf8"), file).map((f) => ({
    point: f.point,
    event: f.event,
    origin: `${file}:${f.line}`,
  }));
  // A generous bound: the hunt finishes in a few seconds on an idle machine, and must not be cut short here.
  return { result: await huntTimeouts(target, { point: "tool.call", bases, timeMs, seed: 1 }), target };
}

describe("huntTimeouts", () => {
  it("flags the quadratic fork-bomb pattern with its slope and the size at which it times out", async () => {
    const { result } = await hunt(QUADRATIC);
    expect(result.complete).toBe(true);
    const flag = result.flags.find((f) => f.input.path === "call.args.command");
    expect(flag, JSON.stringify(result.flags)).toBeDefined();
    if (!flag) return;
    expect(flag.slope).toBeGreaterThanOrEqual(1.5);
    expect(flag.beyondCap).toBe(false);
    // 16 KB took 610 ms before the fix, so 50 ms falls well inside the event cap.
    expect(flag.projectedSize).toBeGreaterThan(256);
    expect(flag.projectedSize).toBeLessThan(256 * 1024);
    expect(flag.input).toMatchObject({ kind: "string", origin: expect.stringContaining("fixtures.jsonl:") });
    expect(flag.points.length).toBeGreaterThanOrEqual(3);
    // Growing far enough reaches the timeout itself.
    expect(result.failures.map((f) => [f.code, f.found])).toContainEqual(["timeout", "grow"]);
  }, 240_000);

  it("does not flag its fixed twin", async () => {
    const { result } = await hunt(FIXED);
    expect(result.complete).toBe(true);
    expect(result.flags).toEqual([]);
    // Grown to the event cap: linear costs may still reach the timeout there (a failure, not a flag).
    expect(result.largestSize).toBeGreaterThan(512 * 1024);
    expect(result.failures.every((f) => f.found === "grow" && f.grown !== undefined)).toBe(true);
  }, 240_000);

  it("reports a hook whose memory grows with its input as a failure and carries on", async () => {
    // Every suffix of the event kept alive: quadratic memory, then the isolate's limit (or the timeout).
    const index = `export default { toolCall(event) {
      const s = JSON.stringify(event.call.args); const kept = [];
      for (let i = 0; i < s.length; i++) kept.push(s.slice(i).split(""));
    } };`;
    const entry = writeHook(
      root,
      "memory-bomb",
      index,
      toolCallFixture("shell", { command: "ls -la" }, { noop: true }),
    );
    const { result, target } = await hunt(entry, 60_000);
    const codes = result.failures.map((f) => f.code);
    expect(codes.some((c) => c === "memory_limit" || c === "timeout" || c === "sandbox_crashed")).toBe(true);
    expect(result.failures.every((f) => f.found === "grow" && f.grown?.path.startsWith("call."))).toBe(true);
    // The sandbox is still there for the next bundle.
    const next = await target.executor.describe(TenantId.parse("hunt"), target.bundle);
    expect(next.type).toBe("described");
  }, 240_000);
});
