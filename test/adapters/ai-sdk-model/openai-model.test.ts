import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelStreamPart } from "../../../src/agent/index.js";
import { ModelError, type ModelRequest, openAIModel } from "../../../src/index.js";

/**
 * `openAIModel` (over `@ai-sdk/openai-compatible`) against a local server whose every answer the test
 * writes: the request body, the reply mapping, the environment fallbacks and each failure's `ModelError`.
 */

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

let server: Server;
let baseUrl: string;
let handler: Handler = (_req, _body, res) => res.end("{}");

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on("end", () => handler(req, body, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const request: ModelRequest = {
  model: "test-model",
  messages: [
    { role: "system", content: "be brief" },
    { role: "user", content: "list files" },
    { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "shell", args: { command: "ls" } }] },
    { role: "tool", toolCallId: "c1", name: "shell", content: "a.txt", isError: false },
  ],
  tools: [{ name: "shell", description: "runs", parameters: { type: "object" } }],
  settings: { temperature: 0, maxTokens: 100, toolChoice: { name: "shell" } },
};

const json = (res: ServerResponse, status: number, value: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
};

const signal = () => new AbortController().signal;
/** Whole replies, no retry delays: the cases below are about one answer each. */
const quick = { env: {}, stream: false, retryDelayMs: 0 } as const;

async function rejection(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ModelError)) throw new Error(`expected a ModelError, got ${String(error)}`);
  return error;
}

describe("openAIModel", () => {
  it("sends a chat completion and maps the reply, tool calls and usage", async () => {
    let seen: { auth: string | undefined; path: string | undefined; body: Record<string, unknown> } | undefined;
    handler = (req, body, res) => {
      seen = { auth: req.headers.authorization, path: req.url, body: JSON.parse(body) };
      json(res, 200, {
        choices: [
          {
            message: {
              content: null,
              tool_calls: [
                { id: "x1", type: "function", function: { name: "shell", arguments: '{"command":"pwd"}' } },
                { id: "x2", type: "function", function: { name: "shell", arguments: "{not json" } },
              ],
            },
            finish_reason: "tool_calls",
          },
        ],
        usage: { prompt_tokens: 12, completion_tokens: 5 },
      });
    };
    const model = openAIModel({ ...quick, baseUrl, apiKey: "sk-test", model: "test-model" });
    const reply = await model.complete(request, signal());
    expect(seen?.auth).toBe("Bearer sk-test");
    expect(seen?.path).toBe("/v1/chat/completions");
    expect(seen?.body).toMatchObject({
      model: "test-model",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "list files" },
        {
          role: "assistant",
          tool_calls: [{ id: "c1", type: "function", function: { name: "shell", arguments: '{"command":"ls"}' } }],
        },
        { role: "tool", tool_call_id: "c1", content: "a.txt" },
      ],
      tools: [{ type: "function", function: { name: "shell", description: "runs", parameters: { type: "object" } } }],
      temperature: 0,
      max_tokens: 100,
      tool_choice: { type: "function", function: { name: "shell" } },
    });
    expect(reply).toEqual({
      message: {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "x1", name: "shell", args: { command: "pwd" } },
          { id: "x2", name: "shell", args: {} },
        ],
      },
      usage: { inputTokens: 12, outputTokens: 5 },
      finishReason: "toolCalls",
      malformedArgs: { x2: "the arguments are not valid JSON" },
    });
  });

  it("reads base URL, key and model from the environment", async () => {
    let auth: string | undefined;
    handler = (req, _body, res) => {
      auth = req.headers.authorization;
      json(res, 200, { choices: [{ message: { content: "hi" }, finish_reason: "stop" }] });
    };
    const model = openAIModel({
      stream: false,
      env: { ISOHOOK_OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: "sk-env", ISOHOOK_OPENAI_MODEL: "env-model" },
    });
    expect(model.id).toBe("env-model");
    expect(model.stream).toBeUndefined();
    const reply = await model.complete({ ...request, tools: [] }, signal());
    expect(auth).toBe("Bearer sk-env");
    expect(reply).toMatchObject({ message: { content: "hi" }, finishReason: "stop", usage: { inputTokens: 0 } });
  });

  it("refuses to start without a model id, with a bad base URL or with a bad retry count", () => {
    expect(() => openAIModel({ baseUrl, env: {} })).toThrow(/ISOHOOK_OPENAI_MODEL/);
    expect(() => openAIModel({ baseUrl: "ftp://x", model: "m", env: {} })).toThrow(/http\(s\) URL/);
    expect(() => openAIModel({ baseUrl, model: "m", env: {}, maxRetries: -1 })).toThrow(/`maxRetries`.*0 to 10/);
  });

  it("streams reasoning, text and tool-call arguments, then the whole reply", async () => {
    handler = (_req, body, res) => {
      expect(JSON.parse(body)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta: object, finish: string | null = null, extra: object = {}) =>
        res.write(
          `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`,
        );
      chunk({ role: "assistant", reasoning_content: "think" });
      chunk({ content: "Hel" });
      chunk({ content: "lo" });
      chunk({
        tool_calls: [{ index: 0, id: "t1", type: "function", function: { name: "shell", arguments: '{"comm' } }],
      });
      chunk({ tool_calls: [{ index: 0, function: { arguments: 'and":"ls"}' } }] });
      chunk({}, "tool_calls", { usage: { prompt_tokens: 3, completion_tokens: 4 } });
      res.end("data: [DONE]\n\n");
    };
    const model = openAIModel({ baseUrl, model: "m", env: {} });
    const parts: ModelStreamPart[] = [];
    for await (const part of model.stream?.(request, signal()) ?? []) parts.push(part);
    const deltas = parts.flatMap((p) => (p.type === "delta" ? [[p.kind, p.delta, p.callId]] : []));
    expect(deltas).toEqual([
      ["reasoning", "think", undefined],
      ["text", "Hel", undefined],
      ["text", "lo", undefined],
      ["toolArgs", '{"comm', "t1"],
      ["toolArgs", 'and":"ls"}', "t1"],
    ]);
    expect(parts.at(-1)).toEqual({
      type: "finish",
      reply: {
        message: {
          role: "assistant",
          content: "Hello",
          toolCalls: [{ id: "t1", name: "shell", args: { command: "ls" } }],
        },
        usage: { inputTokens: 3, outputTokens: 4 },
        finishReason: "toolCalls",
      },
    });
  });

  it("names a refused key on 401 and the provider's message on other 4xx, without retrying them", async () => {
    let calls = 0;
    handler = (_req, _body, res) => {
      calls += 1;
      json(res, 401, { error: { message: "Incorrect API key provided" } });
    };
    const model = openAIModel({ ...quick, baseUrl, model: "m" });
    const auth = await rejection(model.complete(request, signal()));
    expect(auth).toMatchObject({ code: "model_auth", status: 401 });
    expect(auth.message).toMatch(/Incorrect API key provided.*OPENAI_API_KEY/);
    expect(calls).toBe(1);

    handler = (_req, _body, res) => json(res, 404, { error: { message: "The model `m` does not exist" } });
    const missing = await rejection(model.complete(request, signal()));
    expect(missing).toMatchObject({ code: "model_rejected", status: 404 });
    expect(missing.message).toMatch(/does not exist/);
  });

  it("retries a 5xx and reports the provider unavailable once the retries are spent", async () => {
    let calls = 0;
    handler = (_req, _body, res) => {
      calls += 1;
      res.writeHead(503);
      res.end("upstream overloaded");
    };
    const error = await rejection(openAIModel({ ...quick, baseUrl, model: "m" }).complete(request, signal()));
    expect(error).toMatchObject({ code: "model_unavailable", status: 503 });
    expect(error.message).toMatch(/after 3 attempts/);
    expect(calls).toBe(3);
  });

  it("rejects replies that are not JSON or not a chat completion", async () => {
    const model = openAIModel({ ...quick, baseUrl, model: "m" });
    handler = (_req, _body, res) => res.end("<html>hello</html>");
    expect(await rejection(model.complete(request, signal()))).toMatchObject({ code: "model_malformed_reply" });
    handler = (_req, _body, res) => json(res, 200, { choices: "none" });
    expect(await rejection(model.complete(request, signal()))).toMatchObject({ code: "model_malformed_reply" });
    handler = (_req, _body, res) =>
      json(res, 200, {
        choices: [{ message: { tool_calls: [{ id: "1", function: { name: "rm -rf", arguments: "{}" } }] } }],
      });
    expect((await rejection(model.complete(request, signal()))).message).toMatch(/no valid tool name/);
  });

  it("times out a server that does not answer", async () => {
    handler = () => {};
    const error = await rejection(
      openAIModel({ ...quick, baseUrl, model: "m", timeoutMs: 50 }).complete(request, signal()),
    );
    expect(error.code).toBe("model_timeout");
  });

  it("rejects with the abort reason when the signal aborts", async () => {
    handler = () => {};
    const controller = new AbortController();
    const pending = openAIModel({ ...quick, baseUrl, model: "m" }).complete(request, controller.signal);
    const reason = new Error("user cancelled");
    setTimeout(() => controller.abort(reason), 20);
    await expect(pending).rejects.toBe(reason);
  });

  it("reports an unreachable server", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const model = openAIModel({ ...quick, baseUrl: `http://127.0.0.1:${port}/v1`, model: "m" });
    const error = await rejection(model.complete(request, signal()));
    expect(error).toMatchObject({ code: "model_unreachable" });
    expect(error.message).toMatch(/Check the base URL/);
  });
});
