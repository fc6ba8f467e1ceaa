import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { OpenAIModelOptions } from "../../../src/adapters/ai-sdk/index.js";
import type { AgentEvent } from "../../../src/agent/index.js";
import { defineTool, ModelError, openAIModel } from "../../../src/index.js";
import type { HookRuntime } from "../../../src/runtime/index.js";
import {
  type ChatCompletionsServer,
  endlessStream,
  type Misbehaviour,
  sseChunk,
  startChatCompletionsServer,
} from "../../support/chat-completions-server.js";
import { frameworkRuntime } from "../../support/framework-runtime.js";

/**
 * `openAIModel` (the real `@ai-sdk/openai-compatible` package) in isohook's loop against a local SSE server,
 * with the tenant `acme` running hooks/stream-guard in the process sandbox: a streamed run, a stop that
 * aborts a never-ending stream, a dropped connection, a 429 with `Retry-After`, garbage, silence and a huge
 * delta. Every run must end, with the outcome named.
 */

let runtime: HookRuntime;
let close: () => Promise<void>;
let server: ChatCompletionsServer | undefined;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  process.on("unhandledRejection", onUnhandled);
  ({ runtime, close } = await frameworkRuntime("hooks/stream-guard/index.ts"));
});

afterAll(async () => {
  await close();
  process.off("unhandledRejection", onUnhandled);
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  expect(unhandled).toEqual([]);
});

const shell = defineTool({
  name: "shell",
  description: "Runs a shell command",
  parameters: z.object({ command: z.string() }),
  execute: async ({ command }) => ({ content: `ran ${command}: a.txt b.txt`, isError: false }),
});

async function run(turns: Parameters<typeof startChatCompletionsServer>[0], options: Partial<OpenAIModelOptions> = {}) {
  server = await startChatCompletionsServer(turns);
  const model = openAIModel({ baseUrl: server.baseURL, model: "local", env: {}, retryDelayMs: 0, ...options });
  const events: AgentEvent[] = [];
  const result = await runtime.runAgent({
    tenantId: "acme",
    input: "List the files",
    tools: [shell],
    model,
    onEvent: (event) => events.push(event as AgentEvent),
  });
  const deltas = events.flatMap((e) => (e.type === "model.delta" ? [e] : []));
  const streamed = events.flatMap((e) => (e.type === "hooks.decided" && e.point === "model.stream" ? [e] : []));
  return { result, deltas, streamed };
}

/** A 429 with the given retry headers. */
function rateLimited(headers: Record<string, string>): Misbehaviour {
  return (res) => {
    res.writeHead(429, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify({ error: { message: "Rate limit reached", type: "rate_limit" } }));
  };
}

describe("openAIModel in isohook's loop, against a local chat-completions server", () => {
  it("streams reasoning, text and tool arguments through the tenant's model.stream hook, then runs the tool", async () => {
    const { result, deltas, streamed } = await run([
      {
        reasoning: ["Let me ", "look."],
        chunks: ["I will ", "list them."],
        toolCalls: [{ name: "shell", args: { command: "ls" } }],
      },
      { text: "Two files: a.txt and b.txt." },
    ]);
    expect(result).toMatchObject({ stopReason: "completed", output: "Two files: a.txt and b.txt.", turns: 2 });
    expect(result.usage.inputTokens).toBe(20);
    expect(new Set(deltas.map((d) => d.kind))).toEqual(new Set(["reasoning", "text", "toolArgs"]));
    expect(
      deltas
        .filter((d) => d.kind === "toolArgs")
        .map((d) => d.delta)
        .join(""),
    ).toBe('{"command":"ls"}');
    expect(streamed.length).toBeGreaterThan(0);
    expect(streamed.every((e) => e.records.some((r) => r.hookId.startsWith("tenant:acme")))).toBe(true);
    expect(result.transcript.find((m) => m.role === "tool")?.content).toBe("ran ls: a.txt b.txt");
    expect(server?.requests[0]).toMatchObject({ stream: true, model: "local" });
  });

  it("aborts a never-ending stream when the tenant's hook stops it on a leaked key", async () => {
    const { handler, closed } = endlessStream((res, n) =>
      res.write(sseChunk({ content: n === 40 ? " sk-ABCDEFGHIJKLMNOPQRSTUV " : "lorem " })),
    );
    const { result, deltas } = await run([handler]);
    expect(result.stopReason).toBe("stopped");
    expect(result.reason).toBe("credential in the model's text");
    expect(result.decidedBy).toMatchObject({ hookId: "tenant:acme@v1" });
    expect(deltas.length).toBeGreaterThan(40);
    await closed; // the provider request was ended: never resolves (the test times out) if it was not
  });

  it("ends the run with model_unreachable when the connection drops mid-stream", async () => {
    const drop: Misbehaviour = (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(sseChunk({ role: "assistant", content: "Half an ans" }));
      setImmediate(() => res.destroy());
    };
    const { result, deltas } = await run([drop]);
    expect(result.stopReason).toBe("error");
    expect(result.error?.code).toBe("model_unreachable");
    expect(result.error?.message).toMatch(/broke off before its end.*Retry the run/);
    expect(deltas.map((d) => d.delta)).toEqual(["Half an ans"]);
  });

  it("retries a 429 after the delay its Retry-After names, then streams the reply", async () => {
    const limited = rateLimited({ "retry-after": "1" });
    // A first backoff of a minute: only the server's Retry-After lets this test finish in time.
    const { result } = await run([limited, { text: "At last." }], { retryDelayMs: 60_000 });
    expect(result).toMatchObject({ stopReason: "completed", output: "At last." });
    const [first = 0, second = 0] = server?.arrivals ?? [];
    expect(server?.arrivals).toHaveLength(2);
    expect(second - first).toBeGreaterThanOrEqual(990);
  });

  it("does not count a retry's wait as a silent stream", async () => {
    const limited = rateLimited({ "retry-after-ms": "1500" });
    const { result } = await run([limited, { text: "Waited." }], { timeoutMs: 1_000 });
    expect(result).toMatchObject({ stopReason: "completed", output: "Waited." });
  });

  it("reports a 429 that outlasts the retries as a ModelError with status 429", async () => {
    const limited = rateLimited({ "retry-after": "0" });
    const { result } = await run([limited, limited, limited]);
    expect(result.stopReason).toBe("error");
    expect(result.error).toMatchObject({ code: "model_unavailable" });
    expect(result.error?.message).toMatch(/HTTP 429\) after 3 attempts: Rate limit reached/);

    await server?.close();
    server = await startChatCompletionsServer([limited, limited]);
    const model = openAIModel({ baseUrl: server.baseURL, model: "m", env: {}, maxRetries: 1 });
    const request = { model: "m", messages: [{ role: "user" as const, content: "hi" }], tools: [], settings: {} };
    const error = await (async () => {
      for await (const _ of model.stream?.(request, new AbortController().signal) ?? []);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: "model_unavailable", status: 429 });
  });

  it("ends the run with model_malformed_reply on garbage in the stream", async () => {
    const garbage: Misbehaviour = (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(sseChunk({ content: "fine so far" }));
      res.end("data: {this is not json\n\ndata: [DONE]\n\n");
    };
    const { result } = await run([garbage]);
    expect(result.stopReason).toBe("error");
    expect(result.error?.code).toBe("model_malformed_reply");
  });

  it("times out a stream that goes silent", async () => {
    const silent: Misbehaviour = (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(sseChunk({ content: "and then" }));
    };
    const { result } = await run([silent], { timeoutMs: 300 });
    expect(result.stopReason).toBe("error");
    expect(result.error?.code).toBe("model_timeout");
    expect(result.error?.message).toMatch(/sent nothing for 300 ms mid-stream/);
  });

  it("survives a 2 MB delta: the run ends and the hook still finds a key in its middle", async () => {
    const huge: Misbehaviour = (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const half = "x".repeat(1_000_000);
      res.write(sseChunk({ content: `${half} sk-ABCDEFGHIJKLMNOPQRSTUV ${half}` }));
      res.write(sseChunk({}, "stop"));
      res.end("data: [DONE]\n\n");
    };
    const { result } = await run([huge]);
    expect(result.stopReason).toBe("stopped");
    expect(result.reason).toBe("credential in the model's text");
  });
});
