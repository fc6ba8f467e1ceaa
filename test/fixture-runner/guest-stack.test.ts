/**
 * A thrown error's stack crosses the sandbox boundary as text the guest controls: the host keeps only
 * positions in the tenant's own bundle, maps them to its files, caps them, and never shows host paths
 * (hostile cases: forged, huge, path-laden stacks, looping and throwing `stack` getters, prepareStackTrace).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInlineExecutor } from "../../sandbox/worker/index.js";
import { type CompiledHook, compileHook } from "../../src/bundler/index.js";
import { type FixtureReport, parseFixtures, runFixtures } from "../../src/fixture-runner/index.js";
import {
  failureText,
  type HookExecutor,
  Limits,
  MAX_STACK_FRAMES,
  parseGuestReply,
  TenantId,
} from "../../src/protocol/index.js";

const ENTRY = new URL("../fixtures/stack/index.ts", import.meta.url).pathname;
let executor: HookExecutor;
let built: CompiledHook;

beforeAll(async () => {
  built = await compileHook(ENTRY, {});
  executor = createInlineExecutor({ limits: { timeoutMs: 200 }, quiet: true });
});
afterAll(() => executor?.close());

/** Each command runs as its own tenant, so its own isolate: a trap one case sets stays in that case. */
async function call(command: string, point: "tool.call" | "tool.result" = "tool.call"): Promise<FixtureReport> {
  const call = { id: "c1", name: "shell", args: { command } };
  const event =
    point === "tool.call"
      ? { call, batch: { index: 0, size: 1 } }
      : { call, executed: true, result: { content: command, isError: false } };
  const [report] = await runFixtures({
    executor,
    bundle: {
      code: built.code,
      manifest: { hash: built.hash, hookPoints: ["tool.call", "tool.result"] },
      sourceMap: built.sourceMap,
    },
    tenantId: TenantId.parse(`t-${command}`),
    fixtures: parseFixtures(JSON.stringify({ point, event }), "f.jsonl"),
    limits: { timeoutMs: 200 },
  });
  if (report === undefined) throw new Error("no report");
  return report;
}

function failureOf(report: FixtureReport) {
  if (report.outcome.type !== "failed") throw new Error(`expected a failure, got ${JSON.stringify(report.outcome)}`);
  return report.outcome.failure;
}

describe("guest stacks", () => {
  it("maps a thrown error to the author's file, line and column, innermost first", async () => {
    const failure = failureOf(await call("throw"));
    expect(failure.stack?.[0]).toEqual({ name: "parse", file: "index.ts", line: 3, column: 34 });
    expect(failure.stack?.[1]).toMatchObject({ file: "index.ts", name: expect.stringContaining("toolCall") });
    expect(failureText(failure)).toBe("threw: Error: cannot parse: throw (at index.ts:3:34)");
  });

  it("maps an async handler's rejection too", async () => {
    const failure = failureOf(await call("throw", "tool.result"));
    expect(failure.stack?.[0]).toMatchObject({ file: "index.ts", line: 3, column: 34 });
  });

  it.each(["huge", "paths", "object", "getter-throws", "prepare", "prepare-loop"])(
    "keeps no host path and no forged frame from a %s stack",
    async (command) => {
      const report = await call(command);
      const failure = failureOf(report);
      expect(failure.code).toBe("threw");
      const json = JSON.stringify(report);
      expect(json).not.toContain("/home/host");
      expect(json).not.toContain("node:internal");
      expect(json.length).toBeLessThan(4_000);
      for (const frame of failure.stack ?? []) expect(frame.file).toBe("index.ts");
    },
  );

  it("keeps only bundle frames from the reply, with printable function names", () => {
    const stack =
      "Error: x\n    at \u001b[2J\u0007evil (bundle:sha256-ab:3:1)\n    at f (/home/host/a.ts:1:1)\n    at bundle:h:7:2";
    const reply = JSON.stringify({ kind: "failed", code: "threw", message: "x", stack, logs: [] });
    const outcome = parseGuestReply("tool.call", reply, Limits.parse({}));
    expect(outcome.type === "failed" && outcome.failure.stack).toEqual([
      { name: "?[2J?evil", file: "bundle", line: 3, column: 1 },
      { file: "bundle", line: 7, column: 2 },
    ]);
  });

  it("caps a stack of thousands of frames", async () => {
    const failure = failureOf(await call("many"));
    expect(failure.stack?.length ?? 0).toBeLessThanOrEqual(MAX_STACK_FRAMES);
  });

  it("never runs a stack getter: a looping one is a plain threw without a stack, and the next call answers", async () => {
    const looping = failureOf(await call("getter-loop"));
    expect([looping.code, looping.stack]).toEqual(["threw", undefined]);
    expect(failureOf(await call("throw")).stack?.[0]).toMatchObject({ file: "index.ts", line: 3 });
  });
});
