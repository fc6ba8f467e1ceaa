import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { aiSdkModel } from "../../../src/adapters/ai-sdk/index.js";
import type { ModelRequest, ModelStreamPart } from "../../../src/agent/index.js";
import { ModelError } from "../../../src/index.js";

/** `aiSdkModel` over the AI SDK's own mock model: the call options it sends, model switching, bad options. */

const usage = {
  inputTokens: { total: 7, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 3, text: undefined, reasoning: undefined },
};

const request: ModelRequest = {
  model: "mock",
  messages: [
    { role: "system", content: "be brief" },
    { role: "user", content: "list" },
    { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "shell", args: { command: "ls" } }] },
    { role: "tool", toolCallId: "c1", name: "shell", content: "denied", isError: true },
  ],
  tools: [{ name: "shell", description: "runs", parameters: { type: "object" } }],
  settings: { temperature: 0.5, maxTokens: 64, toolChoice: "required" },
};

function streamOf(parts: LanguageModelV4StreamPart[]): ReadableStream<LanguageModelV4StreamPart> {
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

describe("aiSdkModel", () => {
  it("sends the transcript, tools and settings in the provider spec's shapes and maps the reply", async () => {
    const mock = new MockLanguageModelV4({
      modelId: "mock",
      doGenerate: async () => ({
        content: [{ type: "text", text: "ok" }],
        finishReason: { unified: "length", raw: "length" },
        usage,
        warnings: [],
      }),
    });
    const model = aiSdkModel(mock, { stream: false });
    expect(model.id).toBe("mock");
    expect(model.stream).toBeUndefined();
    const reply = await model.complete(request, new AbortController().signal);
    expect(reply).toEqual({
      message: { role: "assistant", content: "ok" },
      usage: { inputTokens: 7, outputTokens: 3 },
      finishReason: "length",
    });
    const sent = mock.doGenerateCalls[0];
    expect(sent).toMatchObject({
      temperature: 0.5,
      maxOutputTokens: 64,
      toolChoice: { type: "required" },
      tools: [{ type: "function", name: "shell", description: "runs", inputSchema: { type: "object" } }],
      prompt: [
        { role: "system", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "list" }] },
        {
          role: "assistant",
          content: [{ type: "tool-call", toolCallId: "c1", toolName: "shell", input: { command: "ls" } }],
        },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "c1",
              toolName: "shell",
              output: { type: "error-text", value: "denied" },
            },
          ],
        },
      ],
    });
  });

  it("streams through the model a model.request patch names, and refuses one it was not given", async () => {
    const other = new MockLanguageModelV4({
      modelId: "other",
      doStream: async () => ({
        stream: streamOf([
          { type: "reasoning-delta", id: "r", delta: "hmm" },
          { type: "text-delta", id: "t", delta: "from other" },
          { type: "tool-input-start", id: "k1", toolName: "shell" },
          { type: "tool-input-delta", id: "k1", delta: "[1]" },
          { type: "tool-call", toolCallId: "k1", toolName: "shell", input: "[1]" },
          { type: "finish", usage, finishReason: { unified: "tool-calls", raw: undefined } },
        ]),
      }),
    });
    const model = aiSdkModel(new MockLanguageModelV4({ modelId: "mock" }), { models: { other } });
    const parts: ModelStreamPart[] = [];
    for await (const part of model.stream?.({ ...request, model: "other" }, new AbortController().signal) ?? [])
      parts.push(part);
    expect(parts.map((p) => (p.type === "delta" ? p.kind : p.type))).toEqual([
      "reasoning",
      "text",
      "toolArgs",
      "finish",
    ]);
    expect(parts.at(-1)).toMatchObject({
      reply: {
        message: { content: "from other", toolCalls: [{ id: "k1", name: "shell", args: {} }] },
        finishReason: "toolCalls",
        malformedArgs: { k1: "the arguments are JSON but no object" },
      },
    });
    const refused = await model.complete({ ...request, model: "gpt-9" }, new AbortController().signal).catch((e) => e);
    expect(refused).toBeInstanceOf(ModelError);
    expect(refused).toMatchObject({ code: "model_config" });
    expect((refused as Error).message).toMatch(/`gpt-9`.*`models`/);
  });

  it("rejects a stream without its finish part, an error part, and a tool call id hooks cannot read", async () => {
    const cut = new MockLanguageModelV4({
      modelId: "mock",
      doStream: async () => ({ stream: streamOf([{ type: "text-delta", id: "t", delta: "half" }]) }),
    });
    const drain = async (m: ReturnType<typeof aiSdkModel>) => {
      for await (const _ of m.stream?.(request, new AbortController().signal) ?? []);
    };
    expect(await drain(aiSdkModel(cut)).catch((e) => e)).toMatchObject({ code: "model_malformed_reply" });
    const failing = new MockLanguageModelV4({
      modelId: "mock",
      doStream: async () => ({ stream: streamOf([{ type: "error", error: new Error("overloaded_error") }]) }),
    });
    const error = await drain(aiSdkModel(failing)).catch((e) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: "model_unavailable" });
    expect((error as Error).message).toMatch(/reported an error mid-stream: overloaded_error/);
    const longId = new MockLanguageModelV4({
      modelId: "mock",
      doStream: async () => ({
        stream: streamOf([{ type: "tool-input-delta", id: "x".repeat(5_000), delta: "{}" }]),
      }),
    });
    const tooLong = await drain(aiSdkModel(longId)).catch((e) => e);
    expect(tooLong).toMatchObject({ code: "model_malformed_reply" });
    expect((tooLong as Error).message).toMatch(/tool call id of 5000 characters/);
  });

  it("refuses bad options with a message that names them", () => {
    const mock = new MockLanguageModelV4({ modelId: "mock" });
    expect(() => aiSdkModel(mock, { timeoutMs: 0 })).toThrow(/`timeoutMs`.*1 to 600000/);
    expect(() => aiSdkModel(mock, { retryDelayMs: 1.5 })).toThrow(/`retryDelayMs`/);
  });
});
