import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import type { HookExecutor, ToolCall } from "../../src/protocol/index.js";
import { TenantId } from "../../src/protocol/index.js";
import { createHookRuntime, type HookRuntime, type RunEvent, RuntimeError } from "../../src/runtime/index.js";
import { MemoryBundleStore } from "../../src/store/index.js";

/** The bring-your-own-loop entry: a tenant's run dispatched point by point from outside isohook's loop. */

const acme = TenantId.parse("acme");
const END = { stopReason: "completed", turns: 1, usage: { inputTokens: 0, outputTokens: 0 } } as const;
let executor: HookExecutor;
let runtime: HookRuntime;

function shell(command: string): ToolCall {
  return { id: "call_1", name: "shell", args: { command } };
}

beforeAll(async () => {
  executor = await createHookExecutor({ workers: 1, spareWorker: false, limits: { timeoutMs: 250 } });
  const store = new MemoryBundleStore();
  const built = await buildBundle("hooks/coding-agent", { executor, root: "hooks" });
  await store.upload({ tenantId: acme, ...built, config: { workdir: "/workspace" }, by: "test", activate: true });
  runtime = await createHookRuntime({ executor, store, decisionLog: false });
});
afterAll(async () => {
  await runtime?.close();
  await executor?.close();
});

describe("runtime.openRun", () => {
  it("decides each dispatched point with the tenant's active bundle and reports it", async () => {
    const events: RunEvent[] = [];
    const run = await runtime.openRun({ tenantId: "acme", runId: "byo-1", onEvent: (e) => events.push(e) });
    expect(run.bundle?.version).toBe(1);
    expect(run.warnings).toEqual([]);
    run.beginTurn(1);
    const blocked = await run.dispatch("tool.call", { call: shell("rm -rf /"), batch: { index: 0, size: 1 } });
    expect(blocked.decision.type).toBe("block");
    expect(blocked.records.map((r) => r.hookId)).toEqual(["tenant:acme@v1"]);
    const rewritten = await run.dispatch("tool.call", { call: shell("ls"), batch: { index: 0, size: 1 } });
    expect(rewritten.decision).toMatchObject({ type: "execute", args: { command: "ls", cwd: "/workspace" } });
    await run.end(END);
    await runtime.observersSettled();
    const types = events.map((e) => (e.type === "hooks.decided" ? `${e.type} ${e.point} t${e.turn}` : e.type));
    expect(types).toEqual([
      "run.started",
      "hook.called",
      "hooks.decided tool.call t1",
      "hook.called",
      "hooks.decided tool.call t1",
    ]);
  });

  it("refuses a dispatch after the run ended, and ends once", async () => {
    const run = await runtime.openRun({ tenantId: "acme" });
    await run.end(END);
    await run.end(END);
    const error = await run.dispatch("tool.call", { call: shell("ls"), batch: { index: 0, size: 1 } }).catch((e) => e);
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ code: "closed" });
  });

  it("warns when the tenant has no bundle, and decides with platform hooks only", async () => {
    const events: RunEvent[] = [];
    const run = await runtime.openRun({ tenantId: "initech", onEvent: (e) => events.push(e) });
    expect(run.bundle).toBeUndefined();
    expect(run.warnings.map((w) => w.code)).toEqual(["no_active_bundle"]);
    const { decision } = await run.dispatch("tool.call", { call: shell("rm -rf /"), batch: { index: 0, size: 1 } });
    expect(decision.type).toBe("execute");
    expect(events.map((e) => e.type)).toEqual(["run.started", "run.warning"]);
    await run.end(END);
  });

  it("names a bad tenant or run id before resolving anything", async () => {
    await expect(runtime.openRun({ tenantId: "Not A Tenant" })).rejects.toMatchObject({ code: "invalid_run" });
    await expect(runtime.openRun({ tenantId: "acme", runId: "a\u0000b" })).rejects.toMatchObject({
      code: "invalid_run",
    });
  });

  it("rejects a dispatch whose run signal aborted", async () => {
    const controller = new AbortController();
    const run = await runtime.openRun({ tenantId: "acme", signal: controller.signal });
    controller.abort(new Error("client went away"));
    const error = await run.dispatch("tool.call", { call: shell("ls"), batch: { index: 0, size: 1 } }).catch((e) => e);
    expect((error as Error).message).toBe("client went away");
    await run.end(END);
  });
});
