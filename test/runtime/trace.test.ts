import { describe, expect, it } from "vitest";
import { HookId } from "../../src/protocol/index.js";
import { formatRunEvent } from "../../src/runtime/index.js";

describe("formatRunEvent", () => {
  it("shows an invalid result's issue and path on the hook call's line", () => {
    const line = formatRunEvent({
      type: "hooks.decided",
      turn: 1,
      point: "tool.call",
      decision: { type: "execute", args: {}, rewritten: false },
      records: [
        {
          point: "tool.call",
          hookId: HookId.parse("tenant:acme"),
          source: "tenant" as const,
          bundle: undefined,
          outcome: {
            type: "failed",
            failure: {
              code: "invalid_result",
              message: "The hook returned a result that tool.call does not accept",
              issues: [{ path: ["type"], message: "Expected 'rewrite' | 'block' | 'stop'" }],
            },
          },
          policy: "open" as const,
          runMs: 1,
          cpuMs: 1,
          logs: [],
        },
      ],
    });
    expect(line).toContain(
      "FAILED invalid_result: The hook returned a result that tool.call does not accept — result.type: Expected 'rewrite' | 'block' | 'stop'",
    );
  });
});
