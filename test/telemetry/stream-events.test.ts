import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { scriptedModel } from "../../src/agent/index.js";
import type { HookExecutor } from "../../src/protocol/index.js";
import { createHookRuntime } from "../../src/runtime/index.js";

/** `telemetry.streamEvents`: a span event per streamed delta on its turn span, with kind and size, never text. */

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let executor: HookExecutor;

beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  executor = await createHookExecutor({ workers: 1, spareWorker: false });
});

afterAll(async () => {
  await executor?.close();
  trace.disable();
  await provider.shutdown();
});

const SECRET = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w";

async function streamedRun(streamEvents: boolean | undefined) {
  exporter.reset();
  const runtime = await createHookRuntime({
    executor,
    ...(streamEvents === undefined ? {} : { dispatch: { telemetry: { streamEvents } } }),
  });
  await runtime.runAgent({
    tenantId: "acme",
    input: "Say it",
    tools: [],
    model: scriptedModel([{ reasoning: ["hmm"], chunks: ["The key ", `is ${SECRET}.`] }]),
  });
  await runtime.close();
  const turns = exporter.getFinishedSpans().filter((s) => s.name === "isohook.turn");
  return turns.flatMap((s) => s.events.filter((e) => e.name === "isohook.model.delta"));
}

describe("stream span events", () => {
  it("adds one event per delta to the turn span, with kind and size but not the text", async () => {
    const events = await streamedRun(true);
    expect(events.map((e) => e.attributes)).toEqual([
      { "isohook.stream.kind": "reasoning", "isohook.stream.chars": 3 },
      { "isohook.stream.kind": "text", "isohook.stream.chars": 8 },
      { "isohook.stream.kind": "text", "isohook.stream.chars": SECRET.length + 4 },
    ]);
    expect(JSON.stringify(exporter.getFinishedSpans().map((s) => [s.attributes, s.events]))).not.toContain(SECRET);
  });

  it("adds none by default", async () => {
    expect(await streamedRun(undefined)).toEqual([]);
    expect(exporter.getFinishedSpans().some((s) => s.name === "isohook.turn")).toBe(true);
  });
});
