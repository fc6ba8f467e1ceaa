import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { compileHook, describeBundle } from "../../src/bundler/index.js";
import { fuzzBundle, fuzzPoint } from "../../src/fuzz/index.js";
import { type HookExecutor, Limits, type SandboxResult, TenantId } from "../../src/protocol/index.js";
import { toolCallFixture, writeHook } from "../gate/hook-modules.js";

/** A handler that is only ever called for git_* tools in production, and throws for any other tool. */
const GLOBBED = `
export default {
  toolCall: {
    tools: ["git_*"],
    handler(event) {
      if (!event.call.name.startsWith("git_")) throw new Error("called for " + event.call.name);
      if (event.call.args.force === true) return { type: "block", reason: "no force" };
    },
  },
};
`;

/** The same handler without its matcher: the fuzz must still find the throw. */
const UNGLOBBED = GLOBBED.replace('tools: ["git_*"],', "");

const FIXTURES = [
  toolCallFixture("git_push", { force: true }, { type: "block", reason: "no force" }),
  toolCallFixture("shell", { command: "ls" }, { noop: true }),
].join("\n");

let root: string;
let executor: HookExecutor;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "isohook-fuzz-matchers-"));
  executor = await createHookExecutor({ workers: 1, spareWorker: false });
});
afterAll(async () => {
  await executor?.close();
  rmSync(root, { recursive: true, force: true });
});

async function fuzz(name: string, index: string) {
  const built = await compileHook(writeHook(root, name, index, FIXTURES), { cwd: root });
  const manifest = await describeBundle(built, executor);
  const seeds = FIXTURES.split("\n").map((text, i) => {
    const fixture = JSON.parse(text) as { event: { call: { name: string } } };
    return { point: "tool.call" as const, event: fixture.event, origin: `fixtures.jsonl:${i + 1}` };
  });
  return fuzzBundle(
    {
      executor,
      bundle: { hash: built.hash, code: built.code },
      manifest,
      tenantId: TenantId.parse("t"),
      config: {},
      limits: Limits.parse({}),
    },
    {
      points: ["tool.call"],
      dictionary: ["git_status", "shell"],
      seeds,
      runs: 200,
      timeMs: 60_000,
      seed: 7,
      grow: true,
    },
  );
}

describe("fuzz and tool matchers", () => {
  it("does not flag a handler for tools its matcher never sends it", async () => {
    const report = await fuzz("globbed", GLOBBED);
    expect(report.points[0]?.failures).toEqual([]);
    expect(report.clean).toBe(true);
    // Events for other tools were generated and skipped, as the dispatcher skips them; git_* ones were called.
    expect(report.points[0]?.skipped).toBeGreaterThan(0);
    expect(report.points[0]?.skipped).toBeLessThan(report.points[0]?.runs ?? 0);
  }, 120_000);

  it("still flags the same throw when no matcher guards the handler", async () => {
    const report = await fuzz("unglobbed", UNGLOBBED);
    expect(report.clean).toBe(false);
    expect(report.points[0]?.skipped).toBe(0);
    expect(report.points[0]?.failures.map((f) => f.code)).toContain("threw");
  }, 120_000);
});

describe("a fuzz whose time bound ends before its first call does", () => {
  /** A sandbox whose every call takes 60 ms of wall time and ends as `outcome`: past the fuzz's 20 ms bound. */
  const slow = (result: SandboxResult): HookExecutor => ({
    mode: "inline",
    execute: () => new Promise((done) => setTimeout(() => done(result), 60)),
    describe: () => Promise.reject(new Error("not used")),
    close: async () => {},
  });
  const fuzzSlow = (result: SandboxResult) =>
    fuzzPoint(
      {
        executor: slow(result),
        bundle: { hash: "sha256-slow" as never, code: "" },
        manifest: { hookPoints: ["tool.call"] },
        tenantId: TenantId.parse("t"),
        config: {},
        limits: Limits.parse({}),
      },
      { point: "tool.call", dictionary: [], runs: 10, timeMs: 20, seed: 1 },
    );

  it("reports how that call failed, with its event, not a failed executor", async () => {
    const failure = { code: "timeout" as const, message: "The hook ran past its 50 ms timeout (CPU time)" };
    const result = await fuzzSlow({ type: "failed", failure, cpuMs: 50, runMs: 60 });
    expect(result.failures).toMatchObject([{ code: "timeout", event: { call: expect.any(Object) } }]);
  });

  it("reports nothing when that call decided", async () => {
    const result = await fuzzSlow({
      type: "replied",
      reply: JSON.stringify({ kind: "returned", result: null, logs: [] }),
      cpuMs: 1,
      runMs: 60,
    });
    expect(result.failures).toEqual([]);
    expect(result.runs).toBe(0);
  });
});
