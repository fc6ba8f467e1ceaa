/**
 * The loop on the real dispatcher, with trusted platform hooks (in-process, same interface as tenant
 * bundles, no sandbox): the stacking rules and failure policy as the loop sees them.
 */
import { describe, expect, it } from "vitest";
import { runAgentLoop } from "../../src/agent/index.js";
import { createDispatcher, type PlatformHooks } from "../../src/dispatch/index.js";
import { type HookExecutor, RunId, TenantId } from "../../src/protocol/index.js";
import { call, recordingModel, shellTool } from "./helpers.js";

const unused: HookExecutor = {
  mode: "inline",
  execute: () => Promise.reject(new Error("no tenant bundle in these tests")),
  describe: () => Promise.reject(new Error("no tenant bundle in these tests")),
  close: () => Promise.resolve(),
};

function runScope(hooks: PlatformHooks[]) {
  const dispatcher = createDispatcher({ executor: unused });
  dispatcher.registerPlatformHooks(hooks);
  return dispatcher.openRun({ tenantId: TenantId.parse("acme"), runId: RunId.parse("run-1") });
}

describe("runAgentLoop on the dispatcher", () => {
  it("lets the second hook see the first's rewrite, and runs the tool with both", async () => {
    const seen: unknown[] = [];
    const hooks = runScope([
      {
        id: "first",
        position: "first",
        hooks: { toolCall: (e) => ({ type: "rewrite", args: { ...e.call.args, cwd: "/w" } }) },
      },
      {
        id: "second",
        position: "last",
        hooks: {
          toolCall: (e) => {
            seen.push(e.call.args);
            return { type: "rewrite", args: { ...e.call.args, command: `${String(e.call.args.command)} -l` } };
          },
        },
      },
    ]);
    const ran: { command: string; cwd?: string | undefined }[] = [];
    const model = recordingModel([{ toolCalls: [call("shell", { command: "ls" })] }, { text: "ok" }]);
    await runAgentLoop({ hooks, model, tools: [shellTool(ran)], input: "go" });
    expect(seen).toEqual([{ command: "ls", cwd: "/w" }]);
    expect(ran).toEqual([{ command: "ls -l", cwd: "/w" }]);
  });

  it("blocks a call whose rewrite breaks the tool's schema (invalid_result, tool.call fails closed)", async () => {
    const hooks = runScope([
      { id: "bad", position: "first", hooks: { toolCall: () => ({ type: "rewrite", args: { command: 42 } }) } },
    ]);
    const ran: { command: string }[] = [];
    const model = recordingModel([{ toolCalls: [call("shell", { command: "ls" })] }, { text: "ok" }]);
    const result = await runAgentLoop({ hooks, model, tools: [shellTool(ran)], input: "go" });
    expect(ran).toEqual([]);
    expect(result.transcript[2]).toMatchObject({ role: "tool", isError: true, content: "blocked: invalid_result" });
    expect(result.stopReason).toBe("completed");
  });

  it("ignores a retry on a tool turn (invalid_result under the open policy) and runs the tools", async () => {
    const hooks = runScope([{ id: "retrier", position: "first", hooks: { modelResponse: () => ({ type: "retry" }) } }]);
    const ran: { command: string }[] = [];
    const model = recordingModel([{ toolCalls: [call("shell", { command: "ls" })] }, { text: "final" }, { text: "x" }]);
    const result = await runAgentLoop({ hooks, model, tools: [shellTool(ran)], input: "go", maxTurns: 3 });
    expect(ran).toHaveLength(1);
    expect(result).toMatchObject({ stopReason: "maxTurns", turns: 3 });
  });

  it("decides turn.end by stop over end over continue, every hook running", async () => {
    const called: string[] = [];
    const hook = (
      id: string,
      result: { type: "continue" } | { type: "end"; reason: string } | { type: "stop"; reason: string },
    ) => ({
      id,
      position: "first" as const,
      hooks: {
        turnEnd: () => {
          called.push(id);
          return result;
        },
      },
    });
    const stopping = runScope([
      hook("c", { type: "continue" }),
      hook("s", { type: "stop", reason: "halt" }),
      hook("e", { type: "end", reason: "enough" }),
    ]);
    const stopped = await runAgentLoop({ hooks: stopping, model: recordingModel([{ text: "a" }]), input: "go" });
    expect(stopped).toMatchObject({ stopReason: "stopped", reason: "halt" });
    expect(called).toEqual(["c", "s", "e"]);

    const ending = runScope([hook("c2", { type: "continue" }), hook("e2", { type: "end", reason: "enough" })]);
    const ended = await runAgentLoop({ hooks: ending, model: recordingModel([{ text: "a" }]), input: "go" });
    expect(ended).toMatchObject({ stopReason: "completed", reason: "enough", turns: 1 });
  });

  it("ends the run when a platform hook throws at run.start (fails closed)", async () => {
    const hooks = runScope([
      {
        id: "broken",
        position: "first",
        hooks: {
          runStart: () => {
            throw new Error("bug");
          },
        },
      },
    ]);
    const result = await runAgentLoop({ hooks, model: recordingModel([{ text: "never" }]), input: "go" });
    expect(result.stopReason).toBe("stopped");
    expect(result.decidedBy).toMatchObject({ hookId: "broken", failure: "threw" });
    expect(result.turns).toBe(0);
  });
});
