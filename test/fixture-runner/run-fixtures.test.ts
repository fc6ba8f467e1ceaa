import { describe, expect, it } from "vitest";
import {
  describeOutcome,
  type Expectation,
  mismatchOf,
  parseFixtures,
  runFixtures,
} from "../../src/fixture-runner/index.js";
import {
  BundleHash,
  type HookExecutor,
  type HookOutcome,
  type JsonObject,
  type SandboxBundle,
  type SandboxCall,
  type SandboxResult,
  TenantId,
} from "../../src/protocol/index.js";

const bundle = { hash: BundleHash.parse(`sha256-${"c".repeat(64)}`), code: "fake" };
const tenantId = TenantId.parse("acme");

type Seen = SandboxCall & { readonly bundle: SandboxBundle };

/** A fake sandbox: the "hook" blocks `rm`, times out on `loop`, and echoes ctx into the block reason. */
function fakeExecutor(seen: Seen[]): HookExecutor {
  return {
    mode: "inline",
    async execute(bundle, call): Promise<SandboxResult> {
      seen.push({ ...call, bundle });
      const event = JSON.parse(call.eventJson);
      const command = String(event.call?.args?.command ?? "");
      if (command === "loop") {
        return { type: "failed", failure: { code: "timeout", message: "50 ms" }, cpuMs: 50, runMs: 51 };
      }
      const result = command.startsWith("rm")
        ? { type: "block", reason: `no rm (turn ${JSON.parse(call.ctxJson).turn})` }
        : command === "echo"
          ? { type: "rewrite", args: { ctx: JSON.parse(call.ctxJson) } }
          : null;
      const reply = JSON.stringify({ kind: "returned", result, logs: ["seen"] });
      return { type: "replied", reply, cpuMs: 0.5, runMs: 1 };
    },
    async describe() {
      throw new Error("not used");
    },
    async close() {},
  };
}

const toolCall = (command: string) => ({
  call: { id: "c1", name: "shell", args: { command } },
  batch: { index: 0, size: 1 },
});
const jsonl = (...lines: unknown[]) => lines.map((l) => JSON.stringify(l)).join("\n");

describe("runFixtures", () => {
  it("runs every line through invokeHook and reports pass, mismatch and lines without expect", async () => {
    const fixtures = parseFixtures(
      jsonl(
        {
          point: "tool.call",
          event: toolCall("rm -rf /"),
          ctx: { turn: 3 },
          expect: { type: "block", reason: "no rm (turn 3)" },
        },
        { point: "tool.call", event: toolCall("ls"), expect: { noop: true } },
        { point: "tool.call", event: toolCall("loop"), expect: { failure: "timeout" } },
        { point: "tool.call", event: toolCall("rm x"), expect: { type: "block", reason: "something else" } },
        { point: "tool.call", event: toolCall("ls") },
        { point: "tool.call", event: toolCall("rm x"), expect: { noop: true } },
      ),
      "f.jsonl",
    );
    const reports = await runFixtures({ executor: fakeExecutor([]), bundle, tenantId, fixtures });
    expect(reports.map((r) => [r.line, r.passed, r.mismatch])).toEqual([
      [1, true, undefined],
      [2, true, undefined],
      [3, true, undefined],
      [4, false, 'expected result.reason to be "something else", got "no rm (turn 0)"'],
      [5, undefined, undefined],
      [6, false, 'expected the no-op, got a `block` result {"type":"block","reason":"no rm (turn 0)"}'],
    ]);
    expect(reports[0]).toMatchObject({ point: "tool.call", cpuMs: 0.5, runMs: 1 });
    expect(reports[0]?.outcome).toMatchObject({ type: "decided", logs: ["seen"] });
  });

  it("builds ctx from defaults and the line's partial ctx, with the run's tenant and bundle hash", async () => {
    const fixtures = parseFixtures(
      jsonl(
        { point: "tool.call", event: toolCall("echo") },
        {
          point: "tool.call",
          event: toolCall("echo"),
          ctx: { runId: "r9", turn: 4, hookId: "h:1", bundle: { version: 7 }, config: { x: 1 }, state: { n: 2 } },
        },
      ),
      "f.jsonl",
    );
    const seen: Seen[] = [];
    await runFixtures({ executor: fakeExecutor(seen), bundle, tenantId, fixtures });
    expect(seen.map((c) => JSON.parse(c.ctxJson))).toEqual([
      {
        tenantId: "acme",
        runId: "fixture-run",
        turn: 0,
        hookId: "tenant:acme",
        bundle: { version: 0, hash: bundle.hash },
        config: {},
        state: {},
      },
      {
        tenantId: "acme",
        runId: "r9",
        turn: 4,
        hookId: "h:1",
        bundle: { version: 7, hash: bundle.hash },
        config: { x: 1 },
        state: { n: 2 },
      },
    ]);
    expect(seen.map((c) => [c.tenantId, c.bundle.hash, c.point])).toEqual([
      ["acme", bundle.hash, "tool.call"],
      ["acme", bundle.hash, "tool.call"],
    ]);
  });

  it("stops with the signal's reason when aborted", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    const fixtures = parseFixtures(jsonl({ point: "tool.call", event: toolCall("ls") }), "f.jsonl");
    await expect(
      runFixtures({ executor: fakeExecutor([]), bundle, tenantId, fixtures, signal: controller.signal }),
    ).rejects.toThrow("stop");
  });
});

describe("mismatchOf", () => {
  const decided = (result: unknown): HookOutcome =>
    ({ type: "decided", result, state: undefined, logs: [] }) as HookOutcome;
  const failed: HookOutcome = { type: "failed", failure: { code: "threw", message: "boom" }, logs: [] };
  const block = (result: JsonObject): Expectation => ({ type: "result", result: { type: "block", ...result } });

  it("deep-includes objects and compares arrays element by element", () => {
    const rewrite = decided({ type: "rewrite", args: { command: "ls", cwd: "/w", list: [1, { a: 2, b: 3 }] } });
    const expectRewrite = (args: JsonObject): Expectation => ({ type: "result", result: { type: "rewrite", args } });
    expect(mismatchOf(expectRewrite({ cwd: "/w" }), rewrite)).toBeUndefined();
    expect(mismatchOf(expectRewrite({ list: [1, { a: 2 }] }), rewrite)).toBeUndefined();
    expect(mismatchOf(expectRewrite({ list: [1] }), rewrite)).toBe(
      'expected result.args.list to be [1], got [1,{"a":2,"b":3}]',
    );
    expect(mismatchOf(expectRewrite({ list: [1, { a: 3 }] }), rewrite)).toBe(
      "expected result.args.list[1].a to be 3, got 2",
    );
    expect(mismatchOf(expectRewrite({ missing: "x" }), rewrite)).toBe(
      'expected result.args.missing to be "x", got nothing',
    );
    expect(mismatchOf(expectRewrite({ command: { nested: 1 } }), rewrite)).toBe(
      'expected result.args.command to be an object, got "ls"',
    );
  });

  it("names the expected type against another type, the no-op or a failure", () => {
    expect(mismatchOf(block({}), decided({ type: "stop", reason: "r" }))).toBe(
      'expected a `block` result, got a `stop` result {"type":"stop","reason":"r"}',
    );
    const ask: Expectation = { type: "result", result: { type: "ask", reason: "r" } };
    expect(mismatchOf(ask, decided({ type: "block", reason: "r" }))).toBe(
      'expected an `ask` result, got a `block` result {"type":"block","reason":"r"}',
    );
    expect(mismatchOf(block({}), decided(null))).toBe("expected a `block` result, got the no-op");
    expect(mismatchOf(block({}), failed)).toBe("expected a `block` result, got failure threw: boom");
    expect(mismatchOf({ type: "failure", code: "timeout" }, failed)).toBe(
      "expected failure `timeout`, got failure threw: boom",
    );
    expect(mismatchOf({ type: "failure", code: "threw" }, failed)).toBeUndefined();
    expect(mismatchOf({ type: "noop" }, decided(null))).toBeUndefined();
  });

  it("shortens long outcomes in messages", () => {
    expect(describeOutcome(decided({ type: "block", reason: "x".repeat(500) })).length).toBeLessThan(240);
  });
});
