import { describe, expect, it } from "vitest";
import { createInlineExecutor } from "../../sandbox/worker/index.js";
import { compileHook } from "../../src/bundler/index.js";
import { FixtureError, parseFixtures, runFixtures } from "../../src/fixture-runner/index.js";
import { TenantId } from "../../src/protocol/index.js";

const tenantId = TenantId.parse("acme");
const event = { call: { id: "c1", name: "shell", args: { command: "ls" } }, batch: { index: 0, size: 1 } };
const OUTPUT = { output: "done" };
const line = (expectation: unknown, point = "tool.call") =>
  JSON.stringify({ point, event: point === "tool.call" ? event : OUTPUT, expect: expectation });

function problemOf(expectation: unknown): string {
  try {
    parseFixtures(line(expectation), "f.jsonl");
  } catch (error) {
    if (error instanceof FixtureError) return error.problems[0]?.message ?? "";
    throw error;
  }
  return "parsed";
}

describe("fixture expectations", () => {
  it("names an unknown key in expect", () => {
    expect(problemOf({ type: "block", reson: "x" })).toBe(
      "unknown key `reson` in `expect`: a tool.call `block` result has reason, terminate (and expect may add state, logs)",
    );
    expect(problemOf({ noop: true, extra: 1 })).toBe('`expect` with "noop" must be exactly {"noop": true}');
    expect(problemOf({ failure: "timeout", why: 1 })).toBe(
      '`expect` with "failure" takes no result field: unknown key `why`',
    );
    expect(problemOf({ reason: "x" })).toMatch(/^unknown key `reason` in `expect`: /);
    expect(problemOf({ type: "blok" })).toBe("tool.call has no `blok` result (one of rewrite, block, ask, stop)");
    expect(problemOf({ state: [1] })).toMatch(/^`expect.state` must be a JSON object/);
    expect(problemOf({ logs: "x" })).toMatch(/^`expect.logs` must be an array of strings/);
    expect(problemOf({ failure: "threw", state: {} })).toMatch(/^`expect.state` cannot go with a failure/);
  });

  it("parses state and logs alone or with an outcome", () => {
    const [a, b] = parseFixtures(
      [line({ state: { n: 1 } }), line({ type: "block", logs: ["x"] })].join("\n"),
      "f.jsonl",
    );
    expect(a?.expect).toEqual({ type: "decided", state: { n: 1 } });
    expect(b?.expect).toEqual({ type: "result", result: { type: "block" }, logs: ["x"] });
  });

  it("checks state and logs in the sandbox, and fails a line for a point the bundle does not export", async () => {
    const dir = new URL("../fixtures/state-logs/", import.meta.url).pathname;
    const built = await compileHook(`${dir}index.ts`, {});
    const executor = createInlineExecutor({ quiet: true });
    try {
      const fixtures = parseFixtures(
        [
          line({ noop: true, state: { count: 1 }, logs: ["count 1"] }),
          line({ state: { count: 2 } }),
          line({ logs: ["count 9"] }),
          JSON.stringify({
            point: "tool.call",
            event,
            ctx: { state: { count: 4, keep: true } },
            expect: { state: { count: 5, keep: true } },
          }),
          line({ noop: true }, "output.validate"),
        ].join("\n"),
        "f.jsonl",
      );
      const reports = await runFixtures({
        executor,
        bundle: { code: built.code, manifest: { hash: built.hash, hookPoints: ["tool.call"] } },
        tenantId,
        fixtures,
      });
      expect(reports.map((r) => r.passed)).toEqual([true, false, false, true, false]);
      expect(reports[1]?.mismatch).toBe("expected state.count to be 2, got 1");
      expect(reports[2]?.mismatch).toBe('expected logs ["count 9"], got ["count 1"]');
      expect(reports[4]?.mismatch).toBe(
        "the bundle does not export output.validate (no `outputValidate` handler); it exports tool.call",
      );
    } finally {
      await executor.close();
    }
  });
});
