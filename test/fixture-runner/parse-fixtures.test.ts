import { describe, expect, it } from "vitest";
import { FixtureError, parseFixtures } from "../../src/fixture-runner/index.js";

const EVENT = { call: { id: "c1", name: "shell", args: { command: "ls" } }, batch: { index: 0, size: 1 } };
const line = (value: unknown) => JSON.stringify(value);

function problemsOf(text: string): string[] {
  try {
    parseFixtures(text, "hooks/x/fixtures.jsonl");
  } catch (error) {
    if (error instanceof FixtureError) return error.problems.map((p) => `${p.line}: ${p.message}`);
    throw error;
  }
  return [];
}

describe("parseFixtures", () => {
  it("parses each non-blank line with its line number, ctx and expectation", () => {
    const text = [
      line({ point: "tool.call", event: EVENT, expect: { type: "block", reason: "no" } }),
      "",
      line({ point: "tool.call", event: EVENT, ctx: { turn: 2, config: { a: 1 } }, expect: { noop: true } }),
      line({ point: "tool.call", event: EVENT, expect: { type: null } }),
      line({ name: "loops", point: "tool.call", event: EVENT, expect: { failure: "timeout" } }),
      line({ point: "turn.end", event: { turn: 1, message: { role: "assistant", content: "x" }, toolResults: [] } }),
      "   ",
    ].join("\n");
    const fixtures = parseFixtures(text, "f.jsonl");
    expect(fixtures.map((f) => [f.line, f.point, f.expect])).toEqual([
      [1, "tool.call", { type: "result", result: { type: "block", reason: "no" } }],
      [3, "tool.call", { type: "noop" }],
      [4, "tool.call", { type: "noop" }],
      [5, "tool.call", { type: "failure", code: "timeout" }],
      [6, "turn.end", undefined],
    ]);
    expect(fixtures[1]?.ctx).toEqual({ turn: 2, config: { a: 1 } });
    expect(fixtures[3]?.name).toBe("loops");
    expect(fixtures[0]?.event).toEqual(EVENT);
  });

  it("names the file and every wrong line with what is wrong", () => {
    const text = [
      line({ point: "tool.call", event: EVENT }),
      "{not json",
      line({ point: "tool.calls", event: EVENT }),
      line({ point: "tool.call", event: { call: { id: "c1", name: "shell" }, batch: { index: 0, size: 1 } } }),
      line({ point: "tool.call", event: EVENT, expect: { failure: "boom" } }),
      line({ point: "tool.call", event: EVENT, expect: { noop: false } }),
      line({ point: "tool.call", event: EVENT, expect: { reason: "x" } }),
      line({ point: "tool.call", event: EVENT, ctx: { tenantId: "other" } }),
      line({ point: "tool.call", event: EVENT, expect: { failure: "timeout", message: "x" } }),
      line([1, 2]),
    ].join("\n");
    let error: unknown;
    try {
      parseFixtures(text, "hooks/x/fixtures.jsonl");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(FixtureError);
    expect(error).toMatchObject({ code: "invalid_fixtures", file: "hooks/x/fixtures.jsonl" });
    const problems = problemsOf(text);
    expect(problems.map((p) => Number(p.split(":")[0]))).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(problems[0]).toMatch(/^2: not valid JSON/);
    expect(problems[1]).toMatch(/^3: point: /);
    expect(problems[2]).toBe(
      "4: the event is not a valid tool.call event: call.args: Expected a JSON object (at most 512 levels deep), received undefined",
    );
    expect(problems[3]).toMatch(/^5: unknown failure code "boom"; one of timeout, memory_limit/);
    expect(problems[4]).toBe('6: `expect` with "noop" must be exactly {"noop": true}');
    expect(problems[5]).toMatch(/^7: (`expect` must name what to expect|unknown key `\w+` in `expect`)/);
    expect(problems[6]).toMatch(/^8: ctx: Unrecognized key/);
    expect(problems[7]).toMatch(/^9: `expect` with "failure" takes no result field: unknown key/);
    expect(problems[8]).toMatch(/^10: /);
    expect(error).toHaveProperty(
      "message",
      expect.stringContaining("hooks/x/fixtures.jsonl:4: the event is not a valid tool.call event"),
    );
  });

  it("parses an empty file as no fixtures", () => {
    expect(parseFixtures("\n\n", "f.jsonl")).toEqual([]);
  });
});
