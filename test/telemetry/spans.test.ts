import { SpanStatusCode, trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { declaredTool, scriptedModel } from "../../src/agent/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import { type HookExecutor, TenantId } from "../../src/protocol/index.js";
import { createHookRuntime, type RunAgentResult } from "../../src/runtime/index.js";
import { MemoryBundleStore } from "../../src/store/index.js";

const SECRET = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w";
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
const readFile = declaredTool({ name: "read_file", result: `OPENAI_API_KEY=${SECRET}` });

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let executor: HookExecutor;
let result: RunAgentResult;
let spans: ReadableSpan[];

beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  executor = await createHookExecutor({ workers: 1, spareWorker: false, limits: { timeoutMs: 250 } });
  const store = new MemoryBundleStore();
  const built = await buildBundle("hooks/coding-agent", { executor, root: "hooks" });
  await store.upload({ tenantId: acme, ...built, config: { workdir: "/workspace" }, by: "test", activate: true });
  const runtime = await createHookRuntime({
    executor,
    store,
    limits: { timeoutMs: 250 },
    dispatch: { budgets: { turnMs: 5_000, runMs: 30_000 } },
  });
  result = await runtime.runAgent({
    tenantId: "acme",
    runId: "run-otel",
    input: `Clean up. The key is ${SECRET}.`,
    tools: [shell, readFile],
    model: scriptedModel([
      { toolCalls: [{ name: "shell", args: { command: `rm -rf / # ${SECRET}` } }] },
      { toolCalls: [{ name: "read_file", args: { path: ".env" } }] },
      { text: "Done." },
    ]),
  });
  await runtime.close();
  spans = exporter.getFinishedSpans();
});

afterAll(async () => {
  await executor?.close();
  trace.disable();
  await provider.shutdown();
});

const named = (name: string) => spans.filter((s) => s.name === name);
const parentOf = (span: ReadableSpan) => spans.find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId);

describe("spans of one run", () => {
  it("nests hook calls in their point's dispatch, in their turn, in the run", () => {
    expect(result.stopReason).toBe("completed");
    const [run, ...others] = named("invoke_agent");
    expect(others).toEqual([]);
    expect(run?.parentSpanContext).toBeUndefined();
    expect(run?.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.conversation.id": "run-otel",
      "isohook.tenant.id": "acme",
      "isohook.bundle.version": 1,
      "isohook.run.stop_reason": "completed",
      "isohook.run.turns": 3,
    });
    expect(run?.attributes["isohook.bundle.hash"]).toMatch(/^sha256-/);
    const turns = named("isohook.turn");
    expect(turns.map((t) => t.attributes["isohook.turn"])).toEqual([1, 2, 3]);
    for (const turn of turns) expect(parentOf(turn)).toBe(run);
    const dispatches = named("isohook.dispatch");
    expect(dispatches.map((d) => d.attributes["isohook.hook.point"])).toEqual([
      "tool.call",
      "tool.result",
      "tool.call",
      "tool.result",
    ]);
    expect(dispatches.map((d) => turns.indexOf(parentOf(d) as ReadableSpan))).toEqual([0, 0, 1, 1]);
    expect(dispatches.map((d) => d.attributes["isohook.decision.type"])).toEqual([
      "block",
      "result",
      "execute",
      "result",
    ]);
    const hooks = named("isohook.hook");
    expect(hooks.map((h) => parentOf(h))).toEqual(dispatches);
    for (const hook of hooks) {
      // Within the dispatch: every span of a run is timed on one clock (rounding aside).
      const [start, end] = [hook.startTime, hook.endTime].map(([s, ns]) => s * 1e3 + ns / 1e6);
      const dispatch = parentOf(hook) as ReadableSpan;
      const [dStart, dEnd] = [dispatch.startTime, dispatch.endTime].map(([s, ns]) => s * 1e3 + ns / 1e6);
      expect(start).toBeGreaterThanOrEqual((dStart ?? 0) - 0.001);
      expect(end).toBeLessThanOrEqual((dEnd ?? 0) + 0.001);
    }
  });

  it("names each tenant hook call isohook.hook with its tenant, hook, point, bundle, outcome, decision and costs", () => {
    const hooks = named("isohook.hook");
    expect(hooks.map((h) => h.attributes["isohook.decision.type"])).toEqual(["block", "noop", "noop", "patch"]);
    const hash = named("invoke_agent")[0]?.attributes["isohook.bundle.hash"];
    for (const hook of hooks) {
      expect(hook.attributes).toMatchObject({
        "isohook.tenant.id": "acme",
        "isohook.hook.id": "tenant:acme@v1",
        "isohook.hook.source": "tenant",
        "isohook.bundle.version": 1,
        "isohook.bundle.hash": hash,
        "isohook.hook.outcome": "decided",
      });
      for (const key of ["isohook.hook.cpu_ms", "isohook.hook.run_ms", "isohook.hook.queued_ms"]) {
        expect(hook.attributes[key]).toBeTypeOf("number");
      }
      expect(hook.status.code).toBe(SpanStatusCode.UNSET);
    }
    expect(hooks[0]?.attributes["isohook.hook.load_ms"]).toBeTypeOf("number");
    expect(hooks[0]?.attributes["isohook.hook.policy"]).toBe("closed");
  });

  it("never puts event, result or message content in an attribute or event", () => {
    expect(spans.length).toBeGreaterThan(8);
    const values = spans.flatMap((s) => [
      s.name,
      ...Object.values(s.attributes),
      ...s.events.flatMap((e) => [e.name, ...Object.values(e.attributes ?? {})]),
      s.status.message ?? "",
    ]);
    const text = JSON.stringify(values);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("rm -rf");
    expect(text).not.toContain("Clean up");
    expect(text).not.toContain(".env");
  });
});
