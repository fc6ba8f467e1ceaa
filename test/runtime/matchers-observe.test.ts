import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { declaredTool, scriptedModel } from "../../src/agent/index.js";
import type { HookRecord } from "../../src/dispatch/index.js";
import type { ActiveBundle, HookExecutor, SandboxBundle, SandboxCall } from "../../src/protocol/index.js";
import {
  bundleFromEntry,
  createHookRuntime,
  fixedBundleSource,
  type HookRuntime,
  type RunEvent,
} from "../../src/runtime/index.js";
import { tempHooks } from "../bundler/temp-hooks.js";

const shell = declaredTool({ name: "shell", result: "ran" });
const readFile = declaredTool({ name: "read_file", result: "contents" });
const gitPush = declaredTool({ name: "git_push", result: "pushed" });

/** Room for well-behaved hooks on a machine busy with other suites; the spinner spins all of it. */
const TIMEOUT_MS = 100;

const HOOKS = {
  "shell-only/index.ts": `import { defineHooks } from "isohook/hook-sdk";
export default defineHooks({
  toolCall: {
    tools: ["shell", "git_*"],
    handler(event, ctx) {
      ctx.state.seen = [...((ctx.state.seen as string[] | undefined) ?? []), event.call.name];
      return event.call.name === "git_push" ? { type: "block", reason: "no push" } : undefined;
    },
  },
});
`,
  "observer/index.ts": `import { defineHooks } from "isohook/hook-sdk";
export default defineHooks({
  toolCall(event, ctx) {
    ctx.state.decided = Number(ctx.state.decided ?? 0) + 1;
    return undefined;
  },
  observe: {
    toolResult(event, ctx) {
      ctx.state.results = Number(ctx.state.results ?? 0) + 1;
      console.log("observed", event.call.name, ctx.state.results, "decided:", String(ctx.state.decided));
      return { type: "stop", reason: "ignored" };
    },
    runEnd(event, ctx) {
      console.log("run ended after", ctx.state.results, "results");
    },
  },
});
`,
  "spinner/index.ts": `import { defineHooks } from "isohook/hook-sdk";
export default defineHooks({
  toolCall: { tools: ["shell"], handler: () => ({ type: "block", reason: "no shell" }) },
  observe: {
    toolResult: { tools: ["read_*"], handler() { for (;;) {} } },
  },
});
`,
  "shifty/index.ts": `let reads = 0;
// Reads after the first (a call-time isolate, a later describe) would say "every tool": only the first counts.
export default {
  toolCall: {
    get tools() { reads++; return reads === 1 ? ["shell"] : ["*"]; },
    handler: () => ({ type: "block", reason: "caught" }),
  },
};
`,
  "thrower/index.ts": `import { defineHooks } from "isohook/hook-sdk";
export default defineHooks({
  observe: { toolResult() { throw new Error("audit sink down"); } },
});
`,
};

let executor: HookExecutor;
let crossings: SandboxCall[];
let dir: string;
let remove: () => Promise<void>;

beforeAll(async () => {
  const process = await createHookExecutor({ workers: 1, spareWorker: false, limits: { timeoutMs: TIMEOUT_MS } });
  crossings = [];
  // Counts what crosses into the sandbox; everything else is the process executor's.
  executor = {
    mode: process.mode,
    execute(bundle: SandboxBundle, call: SandboxCall, signal?: AbortSignal) {
      crossings.push(call);
      return process.execute(bundle, call, signal);
    },
    describe: (tenantId, bundle, signal) => process.describe(tenantId, bundle, signal),
    close: () => process.close(),
  };
  ({ dir, remove } = await tempHooks(HOOKS));
});
afterAll(async () => {
  await executor?.close();
  await remove?.();
});

async function runtimeWith(entry: string): Promise<{ runtime: HookRuntime; bundle: ActiveBundle }> {
  const bundle = await bundleFromEntry(`${dir}/${entry}`, { tenantId: "acme", executor });
  const runtime = await createHookRuntime({
    executor,
    bundles: fixedBundleSource([bundle]),
    limits: { timeoutMs: TIMEOUT_MS },
    dispatch: { budgets: { turnMs: 5_000, runMs: 30_000 } },
  });
  return { runtime, bundle };
}

function calls(name: string, count: number) {
  return Array.from({ length: count }, (_, i) => ({ toolCalls: [{ name, args: { n: i } }] }));
}

function hookCalls(events: RunEvent[]): HookRecord[] {
  return events.flatMap((e) => (e.type === "hook.called" ? [e.record] : []));
}

describe("tool matchers", () => {
  it("records the globs in the manifest at bundle time", async () => {
    const { runtime, bundle } = await runtimeWith("shell-only");
    await runtime.close();
    expect(bundle.manifest.hookPoints).toEqual(["tool.call"]);
    expect(bundle.manifest.tools).toEqual({ "tool.call": ["shell", "git_*"] });
    expect(bundle.manifest.observe).toBeUndefined();
  });

  it("makes a 100-call run of another tool cross the sandbox 0 times", async () => {
    const { runtime } = await runtimeWith("shell-only");
    const events: RunEvent[] = [];
    crossings.length = 0;
    const result = await runtime.runAgent({
      tenantId: "acme",
      input: "read a lot",
      tools: [shell, readFile],
      model: scriptedModel([...calls("read_file", 100), { text: "done" }]),
      maxTurns: 101,
      onEvent: (e) => events.push(e),
    });
    await runtime.close();
    expect(result.stopReason).toBe("completed");
    const records = hookCalls(events);
    expect(records).toHaveLength(100);
    expect(records.every((r) => r.outcome.type === "skipped" && r.outcome.reason === "no match")).toBe(true);
    expect(records.every((r) => r.point === "tool.call" && r.runMs === 0 && r.cpuMs === 0)).toBe(true);
    expect(crossings.filter((c) => c.point === "tool.call")).toHaveLength(0);
  });

  it("calls the handler for the tools its globs select, with its state", async () => {
    const { runtime } = await runtimeWith("shell-only");
    const events: RunEvent[] = [];
    crossings.length = 0;
    const result = await runtime.runAgent({
      tenantId: "acme",
      input: "mixed",
      tools: [shell, readFile, gitPush],
      model: scriptedModel([
        {
          toolCalls: [
            { name: "shell", args: {} },
            { name: "read_file", args: {} },
            { name: "git_push", args: {} },
          ],
        },
        { text: "done" },
      ]),
      onEvent: (e) => events.push(e),
    });
    await runtime.close();
    const outcomes = hookCalls(events).map((r) => r.outcome.type);
    expect(outcomes).toEqual(["decided", "skipped", "decided"]);
    expect(crossings.map((c) => JSON.parse(c.eventJson).call.name)).toEqual(["shell", "git_push"]);
    expect(JSON.parse(crossings[1]?.ctxJson ?? "{}").state).toEqual({ seen: ["shell"] });
    const pushed = result.transcript.find((m) => m.role === "tool" && m.content.includes("no push"));
    expect(pushed).toBeDefined();
  });

  it("goes by the globs recorded at describe even when the module would answer differently later", async () => {
    const { runtime, bundle } = await runtimeWith("shifty");
    expect(bundle.manifest.tools).toEqual({ "tool.call": ["shell"] });
    const events: RunEvent[] = [];
    crossings.length = 0;
    await runtime.runAgent({
      tenantId: "acme",
      input: "reads",
      tools: [shell, readFile],
      model: scriptedModel([...calls("read_file", 5), ...calls("shell", 1), { text: "done" }]),
      onEvent: (e) => events.push(e),
    });
    await runtime.close();
    expect(hookCalls(events).map((r) => r.outcome.type)).toEqual([...Array(5).fill("skipped"), "decided"]);
    expect(crossings.map((c) => JSON.parse(c.eventJson).call.name)).toEqual(["shell"]);
  });
});

describe("observe-only hooks", () => {
  it("run after the decision with their own state, their result ignored, records flagged observe", async () => {
    const { runtime, bundle } = await runtimeWith("observer");
    expect(bundle.manifest.observe).toEqual({ hookPoints: ["tool.result", "run.end"] });
    const events: RunEvent[] = [];
    crossings.length = 0;
    const result = await runtime.runAgent({
      tenantId: "acme",
      input: "two reads",
      tools: [readFile],
      model: scriptedModel([...calls("read_file", 2), { text: "done" }]),
      onEvent: (e) => events.push(e),
    });
    await runtime.observersSettled();
    await runtime.close();
    expect(result.stopReason).toBe("completed");
    const observed = hookCalls(events).filter((r) => r.observe === true);
    expect(observed.map((r) => r.point)).toEqual(["tool.result", "tool.result", "run.end"]);
    expect(observed.every((r) => r.outcome.type === "decided" && r.outcome.result === null)).toBe(true);
    expect(observed.every((r) => r.policy === "open")).toBe(true);
    // The observer counts in its own state and never sees the deciding handler's.
    expect(observed.map((r) => r.logs)).toEqual([
      ["observed read_file 1 decided: undefined"],
      ["observed read_file 2 decided: undefined"],
      ["run ended after 2 results"],
    ]);
    expect(crossings.filter((c) => c.priority === "observe")).toHaveLength(3);
    expect(crossings.filter((c) => c.priority === undefined).map((c) => c.point)).toEqual(["tool.call", "tool.call"]);
    const decided: HookRecord[] = events.flatMap((e) => (e.type === "hooks.decided" ? [...e.records] : []));
    expect(decided.some((r) => r.observe)).toBe(false);
  });

  it("never holds the run up: a spinning observer times out off the run's path and is quarantined", async () => {
    const { runtime } = await runtimeWith("spinner");
    const events: RunEvent[] = [];
    const result = await runtime.runAgent({
      tenantId: "acme",
      input: "reads and a shell",
      tools: [readFile, shell],
      model: scriptedModel([...calls("read_file", 8), ...calls("shell", 1), { text: "done" }]),
      maxTurns: 10,
      onEvent: (e) => events.push(e),
    });
    const finishedAt = events.findIndex((e) => e.type === "run.finished");
    await runtime.observersSettled();
    await runtime.close();
    expect(result.stopReason).toBe("completed");
    // The shell call was still decided by the bundle (blocked), not failed or quarantined by the observers' strikes...
    const toolCalls = hookCalls(events).filter((r) => r.point === "tool.call");
    expect(toolCalls.map((r) => r.outcome.type)).toEqual([...Array(8).fill("skipped"), "decided"]);
    expect(toolCalls[8]?.outcome).toEqual({ type: "decided", result: { type: "block", reason: "no shell" } });
    // ...the run ended before its observers did...
    const observed = events.flatMap((e, i) => (e.type === "hook.called" && e.record.observe ? [i] : []));
    expect(observed.length).toBe(8);
    expect(Math.max(...observed)).toBeGreaterThan(finishedAt);
    // ...and the observers' timeouts were struck like any other: the later ones found the bundle quarantined.
    const codes = hookCalls(events)
      .filter((r) => r.observe)
      .map((r) => (r.outcome.type === "failed" ? r.outcome.failure.code : r.outcome.type));
    // (A strike is weighted by the timeouts a call held the worker, so on a busy machine fewer than 5 may do.)
    const struck = codes.indexOf("quarantined");
    expect(struck).toBeGreaterThan(0);
    expect(codes.slice(0, struck).every((c) => c === "timeout")).toBe(true);
    expect(codes.slice(struck).every((c) => c === "quarantined")).toBe(true);
    expect(events.some((e) => e.type === "quarantine.entered")).toBe(true);
  });

  it("records an observer's failure and never changes the run", async () => {
    const { runtime } = await runtimeWith("thrower");
    const events: RunEvent[] = [];
    const result = await runtime.runAgent({
      tenantId: "acme",
      input: "one read",
      tools: [readFile],
      model: scriptedModel([...calls("read_file", 1), { text: "done" }]),
      onEvent: (e) => events.push(e),
    });
    await runtime.observersSettled();
    await runtime.close();
    expect(result.stopReason).toBe("completed");
    const [record] = hookCalls(events);
    expect(record).toMatchObject({ point: "tool.result", observe: true, outcome: { type: "failed" } });
    expect(record?.outcome.type === "failed" && record.outcome.failure).toMatchObject({
      code: "threw",
      message: "Error: audit sink down",
    });
  });

  it("close() cancels observers not yet started and leaves nothing pending", async () => {
    const { runtime } = await runtimeWith("spinner");
    const events: RunEvent[] = [];
    await runtime.runAgent({
      tenantId: "acme",
      input: "reads",
      tools: [readFile],
      model: scriptedModel([...calls("read_file", 4), { text: "done" }]),
      maxTurns: 5,
      onEvent: (e) => events.push(e),
    });
    await runtime.close();
    await runtime.observersSettled();
    expect(hookCalls(events).filter((r) => r.observe).length).toBeLessThan(4);
  });
});
