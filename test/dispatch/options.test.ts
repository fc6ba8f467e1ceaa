import { describe, expect, it } from "vitest";
import { createDispatcher, DispatchError } from "../../src/dispatch/index.js";
import { TenantId } from "../../src/protocol/index.js";
import { bundleOf, FakeExecutor, RUN, returned } from "./helpers.js";

const executor = new FakeExecutor(() => returned(undefined));

function errorOf(fn: () => unknown): DispatchError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DispatchError) return error;
    throw error;
  }
  throw new Error("expected a DispatchError");
}

describe("dispatcher options", () => {
  it("names the field, the expected range and the value", () => {
    const error = errorOf(() => createDispatcher({ executor, budgets: { turnMs: 0 } }));
    expect(error.code).toBe("invalid_options");
    expect(error.message).toContain("Expected `budgets.turnMs` to be an integer from 1 to 3600000, got `0`");
  });

  it("rejects a missing executor and unknown keys", () => {
    expect(errorOf(() => createDispatcher({} as never)).message).toContain("Expected `executor` to be a HookExecutor");
    expect(errorOf(() => createDispatcher({ executor, budget: {} } as never)).message).toContain("budget");
  });

  it("rejects a bad floor and bad limits", () => {
    expect(errorOf(() => createDispatcher({ executor, floor: { "tool.call": "shut" } as never })).message).toContain(
      "`floor`",
    );
    expect(errorOf(() => createDispatcher({ executor, limits: { timeoutMs: 0 } })).message).toContain(
      "limits.timeoutMs",
    );
  });

  it("refuses a bundle of another tenant", () => {
    const dispatcher = createDispatcher({ executor });
    const error = errorOf(() =>
      dispatcher.openRun({ tenantId: TenantId.parse("other"), runId: RUN, bundle: bundleOf([]) }),
    );
    expect(error.message).toContain("belongs to tenant acme");
  });
});

describe("platform hook registration", () => {
  const dispatcher = () => createDispatcher({ executor });

  it("lists the valid handler names for an unknown key", () => {
    const error = errorOf(() =>
      dispatcher().registerPlatformHooks({ id: "p", position: "first", hooks: { toolcall: () => undefined } as never }),
    );
    expect(error.code).toBe("invalid_platform_hooks");
    expect(error.message).toContain("unknown handler `toolcall`; valid handlers are runStart, inputInbound");
  });

  it("rejects duplicate ids, bad positions and non-functions", () => {
    const d = dispatcher();
    d.registerPlatformHooks({ id: "p", position: "first", hooks: {} });
    expect(errorOf(() => d.registerPlatformHooks({ id: "p", position: "last", hooks: {} })).message).toContain(
      "registered already",
    );
    expect(
      errorOf(() => d.registerPlatformHooks({ id: "q", position: "middle" as never, hooks: {} })).message,
    ).toContain('"first" or "last"');
    expect(
      errorOf(() => d.registerPlatformHooks({ id: "r", position: "last", hooks: { toolCall: 1 as never } })).message,
    ).toContain("not a function");
  });

  it("stacks first hooks in registration order, and unregistering affects only runs opened later", async () => {
    const d = dispatcher();
    const order: string[] = [];
    d.registerPlatformHooks({ id: "b", position: "last", hooks: { turnEnd: () => void order.push("last") } });
    const remove = d.registerPlatformHooks([
      { id: "a1", position: "first", hooks: { turnEnd: () => void order.push("first-1") } },
      { id: "a2", position: "first", hooks: { turnEnd: () => void order.push("first-2") } },
    ]);
    const event = { turn: 0, message: { role: "assistant" as const, content: "" }, toolResults: [] };
    const before = d.openRun({ tenantId: TenantId.parse("acme"), runId: RUN });
    remove();
    const after = d.openRun({ tenantId: TenantId.parse("acme"), runId: RUN });
    await before.dispatch("turn.end", event);
    await after.dispatch("turn.end", event);
    expect(order).toEqual(["first-1", "first-2", "last", "last"]);
  });
});
