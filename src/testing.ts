/**
 * `isohook/testing`: test a hook from your own test runner, through the real process sandbox.
 *
 * ```ts
 * import { afterAll, beforeAll, expect, it } from "vitest";
 * import { type HookUnderTest, testHook } from "isohook/testing";
 *
 * let hook: HookUnderTest;
 * beforeAll(async () => { hook = await testHook("index.ts"); });
 * afterAll(() => hook.close());
 *
 * it("passes its fixtures.jsonl", async () => {
 *   expect((await hook.fixtures()).filter((r) => r.passed === false)).toEqual([]);
 * });
 * it("blocks rm -rf /", async () => {
 *   const outcome = await hook.call("tool.call", { call: { id: "c1", name: "shell", args: { command: "rm -rf /" } }, batch: { index: 0, size: 1 } });
 *   expect(outcome).toMatchObject({ type: "decided", result: { type: "block" } });
 * });
 * ```
 */
import { readFile, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { createHookExecutor } from "../sandbox/supervisor/index.js";
import { buildBundle } from "./bundler/index.js";
import { type FixtureCtx, type FixtureReport, parseFixtures, runFixtures } from "./fixture-runner/index.js";
import {
  type BundleManifest,
  type HookEvent,
  type HookOutcome,
  type HookPoint,
  type LimitsInput,
  TenantId,
} from "./protocol/index.js";

export type { FixtureCtx, FixtureReport } from "./fixture-runner/index.js";
export type { BundleManifest, HookOutcome, HookPoint, LimitsInput } from "./protocol/index.js";

export interface TestHookOptions {
  /** Where a relative entry is resolved from. Default: `process.cwd()`. */
  readonly cwd?: string;
  /** Sandbox limits (default 50 ms and 32 MB a call, as in production). */
  readonly limits?: LimitsInput;
  /** The tenant the calls run as (`ctx.tenantId`). Default `isohook-test`. */
  readonly tenantId?: string;
  readonly signal?: AbortSignal;
}

/** A bundled hook loaded in a sandbox worker of its own. Close it when done (`afterAll`). */
export interface HookUnderTest {
  /** What the bundler recorded: hash, size, exported hook points. */
  readonly manifest: BundleManifest;
  /** Runs one event at one point; `ctx` overrides the defaults (`state`, `config`, `turn`, …). */
  call<P extends HookPoint>(point: P, event: HookEvent<P>, ctx?: FixtureCtx): Promise<HookOutcome<P>>;
  /** Runs a fixtures file (default: `fixtures.jsonl` beside the entry); each report says if it `passed`. */
  fixtures(file?: string): Promise<FixtureReport[]>;
  close(): Promise<void>;
}

/**
 * Bundles the hook at `entry` (a .ts file or a folder containing index.ts) exactly as `isohook upload` does
 * and starts one sandbox worker for it. Throws `BundleError` (with every problem's file:line:column) when
 * the hook does not bundle.
 */
export async function testHook(entry: string, options: TestHookOptions = {}): Promise<HookUnderTest> {
  const cwd = options.cwd ?? process.cwd();
  const tenantId = TenantId.parse(options.tenantId ?? "isohook-test");
  const limits = options.limits ?? {};
  const signal = options.signal;
  const executor = await createHookExecutor({ workers: 1, spareWorker: false, limits, ...(signal ? { signal } : {}) });
  let bundle: Awaited<ReturnType<typeof buildBundle>>;
  try {
    bundle = await buildBundle(entry, { executor, cwd, ...(signal ? { signal } : {}) });
  } catch (error) {
    await executor.close();
    throw error;
  }
  const absolute = resolve(cwd, entry);
  const folder = (await stat(absolute)).isDirectory() ? absolute : dirname(absolute);
  const run = (text: string, file: string) =>
    runFixtures({
      executor,
      bundle,
      tenantId,
      fixtures: parseFixtures(text, file),
      limits,
      ...(signal ? { signal } : {}),
    });
  return {
    manifest: bundle.manifest,
    async call(point, event, ctx) {
      const [report] = await run(JSON.stringify({ point, event, ...(ctx ? { ctx } : {}) }), `${point} event`);
      if (report === undefined) throw new Error("isohook/testing: the call produced no report");
      // The outcome was validated by invokeHook against this point's schema; the cast only re-links the generic.
      return report.outcome as HookOutcome<typeof point>;
    },
    async fixtures(file) {
      const path = resolve(folder, file ?? "fixtures.jsonl");
      return run(await readFile(path, "utf8"), path);
    },
    close: () => executor.close(),
  };
}
