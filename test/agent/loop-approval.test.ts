import { describe, expect, it } from "vitest";
import {
  type AgentEvent,
  type PausedRun,
  resumeAgentLoop,
  runAgentLoop,
  scriptedModel,
} from "../../src/agent/index.js";
import type { ToolCallDecision } from "../../src/dispatch/index.js";
import { fakeHooks, type Overrides, TEST_HOOK } from "./fake-hooks.js";
import { call, shellTool } from "./helpers.js";

const TURNS = [
  {
    toolCalls: [
      call("shell", { command: "npm test" }),
      call("shell", { command: "git push origin main" }),
      call("shell", { command: "ls" }),
    ],
  },
  { text: "done" },
];

/** `tool.call` asks about pushes (rewriting them into /workspace first), everything else executes. */
const askAboutPush: Overrides = {
  "tool.call": (e): ToolCallDecision =>
    String(e.call.args.command).includes("push")
      ? {
          type: "ask",
          reason: "pushes need a human",
          question: "Push?",
          args: { ...e.call.args, cwd: "/workspace" },
          rewritten: true,
          by: TEST_HOOK,
        }
      : { type: "execute", args: e.call.args, rewritten: false },
};

async function paused(overrides: Overrides = askAboutPush, parallel = false) {
  const ran: { command: string; cwd?: string | undefined }[] = [];
  const events: AgentEvent[] = [];
  const hooks = fakeHooks(overrides);
  const result = await runAgentLoop({
    hooks,
    model: scriptedModel(TURNS),
    tools: [shellTool(ran)],
    input: "ship it",
    parallelToolCalls: parallel,
    onEvent: (e) => events.push(e),
  });
  return { result, ran, hooks, events };
}

async function resume(state: PausedRun, decisions: Record<string, unknown>, overrides: Overrides = askAboutPush) {
  const ran: { command: string; cwd?: string | undefined }[] = [];
  const hooks = fakeHooks(overrides);
  const model = scriptedModel(TURNS, { start: state.modelCalls });
  const json: PausedRun = JSON.parse(JSON.stringify(state));
  const result = await resumeAgentLoop(
    { hooks, model, tools: [shellTool(ran)], input: [] },
    json,
    decisions as Parameters<typeof resumeAgentLoop>[2],
  );
  return { result, ran, hooks };
}

describe("runAgentLoop approvals", () => {
  it.each([false, true])(
    "finishes the rest of the batch, then ends with stop reason approval (parallel %s)",
    async (parallel) => {
      const { result, ran, hooks, events } = await paused(askAboutPush, parallel);
      expect(result.stopReason).toBe("approval");
      expect(ran.map((r) => r.command)).toEqual(["npm test", "ls"]);
      expect(result.pending).toEqual([
        {
          callId: "call_1_2",
          call: { id: "call_1_2", name: "shell", args: { command: "git push origin main" } },
          args: { command: "git push origin main", cwd: "/workspace" },
          reason: "pushes need a human",
          question: "Push?",
          by: TEST_HOOK,
          turn: 1,
          index: 1,
        },
      ]);
      // The transcript keeps call order: the third call's result waits behind the held second one.
      expect(result.transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
      expect(result.paused?.batch.results.map((r) => r?.content ?? null)).toEqual(["ran npm test", null, "ran ls"]);
      expect(hooks.points()).not.toContain("turn.end");
      expect(hooks.points()).not.toContain("run.end");
      expect(events.at(-1)).toMatchObject({ type: "run.finished", stopReason: "approval" });
      expect(JSON.parse(JSON.stringify(result.paused))).toEqual(result.paused);
    },
  );

  it("runs an approved call with its effective args and goes on as if it never stopped", async () => {
    const { result: first } = await paused();
    const { result, ran, hooks } = await resume(first.paused as PausedRun, { call_1_2: { type: "approve" } });
    expect(ran).toEqual([{ command: "git push origin main", cwd: "/workspace" }]);
    expect(hooks.points().filter((p) => p === "tool.call")).toHaveLength(0);
    expect(result.stopReason).toBe("completed");
    expect(result.output).toBe("done");
    expect(result.transcript.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      "ran npm test",
      "ran git push origin main in /workspace",
      "ran ls",
    ]);
    const turnEnd = hooks.calls.find((c) => c.point === "turn.end")?.event as { turn: number; toolResults: unknown[] };
    expect(turnEnd.turn).toBe(1);
    expect(turnEnd.toolResults).toHaveLength(3);
    expect(hooks.points().filter((p) => p === "run.end")).toHaveLength(1);
    expect(result.turns).toBe(2);
  });

  it("gives a rejected call `rejected: <reason>` and tool.result sees it unexecuted", async () => {
    const { result: first } = await paused();
    const { result, ran, hooks } = await resume(first.paused as PausedRun, {
      call_1_2: { type: "reject", reason: "not on a Friday" },
    });
    expect(ran).toEqual([]);
    expect(result.transcript[3]).toMatchObject({ role: "tool", content: "rejected: not on a Friday", isError: true });
    expect(hooks.calls.find((c) => c.point === "tool.result")?.event).toMatchObject({
      call: { id: "call_1_2" },
      executed: false,
    });
  });

  it("sends edited args through tool.call again: an edit cannot launder a block", async () => {
    const blockForce: Overrides = {
      "tool.call": (e) =>
        String(e.call.args.command).includes("--force")
          ? { type: "block", reason: "no force pushes", terminate: false, args: e.call.args, by: TEST_HOOK }
          : (askAboutPush["tool.call"]?.(e, {}) as ToolCallDecision),
    };
    const { result: first } = await paused(blockForce);
    const edit = { type: "edit", args: { command: "git push --force origin main" } };
    const { result, ran, hooks } = await resume(first.paused as PausedRun, { call_1_2: edit }, blockForce);
    expect(ran).toEqual([]);
    expect(hooks.calls.find((c) => c.point === "tool.call")?.event).toMatchObject({
      call: { id: "call_1_2", args: { command: "git push --force origin main" } },
      batch: { index: 1, size: 3 },
    });
    expect(result.transcript[3]).toMatchObject({ content: "blocked: no force pushes", isError: true });
  });

  it("runs an edited call a hook asks about again: the human wrote those args", async () => {
    const { result: first } = await paused();
    const edit = { type: "edit", args: { command: "git push origin main:release" } };
    const { ran } = await resume(first.paused as PausedRun, { call_1_2: edit });
    expect(ran).toEqual([{ command: "git push origin main:release", cwd: "/workspace" }]);
  });

  it("cancels held calls when a later call stops the run", async () => {
    const stopOnLs: Overrides = {
      "tool.call": (e) =>
        e.call.args.command === "ls"
          ? { type: "stop", reason: "enough", by: TEST_HOOK }
          : (askAboutPush["tool.call"]?.(e, {}) as ToolCallDecision),
    };
    const { result } = await paused(stopOnLs);
    expect(result.stopReason).toBe("stopped");
    expect(result.pending).toBeUndefined();
    expect(result.transcript.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      "ran npm test",
      "cancelled: the run was stopped (enough)",
      "cancelled: the run was stopped (enough)",
    ]);
  });

  it("refuses decisions that miss a pending call, name an unknown one or have the wrong shape", async () => {
    const { result: first } = await paused();
    const state = first.paused as PausedRun;
    await expect(resume(state, {})).rejects.toThrow(/none for call_1_2/);
    await expect(resume(state, { call_1_2: { type: "approve" }, call_9: { type: "approve" } })).rejects.toThrow(
      /No pending call has the id `call_9`/,
    );
    await expect(resume(state, { call_1_2: { type: "allow" } })).rejects.toThrow(/call_1_2/);
    await expect(resume(state, { call_1_2: { type: "reject", reason: "" } })).rejects.toThrow(/call_1_2/);
  });
});
