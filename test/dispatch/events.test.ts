import { describe, expect, it } from "vitest";
import { HASH, RUN, returned, TENANT, toolCallEvent } from "./helpers.js";
import { setup } from "./setup.js";

describe("provenance events", () => {
  it("emits one hook.called per call that references the call's provenance record", async () => {
    const { run, events, clock } = setup({
      points: ["tool.call"],
      first: [{ toolCall: () => undefined }],
      respond: () => returned({ type: "block", reason: "rm -rf" }, { runMs: 3, cpuMs: 2, logs: ["a", "b"] }),
      last: [{ toolCall: () => undefined }],
    });
    run.beginTurn(2);
    const { records } = await run.dispatch("tool.call", toolCallEvent());
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({
      type: "hook.called",
      tenantId: TENANT,
      runId: RUN,
      turn: 2,
      record: {
        point: "tool.call",
        hookId: "first:0",
        source: "platform",
        bundle: undefined,
        outcome: { type: "decided", result: null },
        policy: "closed",
        logs: [],
      },
    });
    expect(events[1]).toEqual({
      type: "hook.called",
      at: clock.now,
      tenantId: TENANT,
      runId: RUN,
      turn: 2,
      record: {
        point: "tool.call",
        hookId: "tenant:acme@v3",
        source: "tenant",
        bundle: { version: 3, hash: HASH },
        outcome: { type: "decided", result: { type: "block", reason: "rm -rf" } },
        policy: "closed",
        runMs: 3,
        cpuMs: 2,
        logs: ["a", "b"],
      },
    });
    expect(events[1]?.type === "hook.called" && events[1].record).toBe(records[1]);
  });

  it("emits failures with their code and message", async () => {
    const { run, events } = setup({ first: [{ turnEnd: () => ({ type: "oops" }) as never }] });
    await run.dispatch("turn.end", { turn: 0, message: { role: "assistant", content: "" }, toolResults: [] });
    expect(events[0]).toMatchObject({
      record: {
        outcome: {
          type: "failed",
          failure: { code: "invalid_result", message: "The hook returned a result that turn.end does not accept" },
        },
        policy: "open",
      },
    });
  });

  it("keeps the logs on the record", async () => {
    const { run } = setup({ points: ["tool.call"], respond: () => returned(undefined, { logs: ["checked /tmp/x"] }) });
    const { records } = await run.dispatch("tool.call", toolCallEvent());
    expect(records[0]?.logs).toEqual(["checked /tmp/x"]);
  });
});
