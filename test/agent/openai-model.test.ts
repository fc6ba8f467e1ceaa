import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelError, type ModelRequest, openAIModel } from "../../src/agent/index.js";

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
    let seen: { auth: string | undefined; path: string | undefined; body: unknown } | undefined;
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
    const model = openAIModel({ baseUrl, apiKey: "sk-test", model: "test-model", env: {} });
    const reply = await model.complete(request, signal());
    expect(seen?.auth).toBe("Bearer sk-test");
    expect(seen?.path).toBe("/v1/chat/completions");
    expect(seen?.body).toEqual({
      model: "test-model",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "list files" },
        {
          role: "assistant",
          content: null,
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
      env: { ISOHOOK_OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: "sk-env", ISOHOOK_OPENAI_MODEL: "env-model" },
    });
    expect(model.id).toBe("env-model");
    const reply = await model.complete({ ...request, tools: [] }, signal());
    expect(auth).toBe("Bearer sk-env");
    expect(reply).toMatchObject({ message: { content: "hi" }, finishReason: "stop", usage: { inputTokens: 0 } });
  });

  it("refuses to start without a model id", () => {
    expect(() => openAIModel({ baseUrl, env: {} })).toThrow(/ISOHOOK_OPENAI_MODEL/);
  });

  it("names a refused key on 401 and the provider's message on other 4xx", async () => {
    handler = (_req, _body, res) => json(res, 401, { error: { message: "Incorrect API key provided" } });
    const model = openAIModel({ baseUrl, model: "m", env: {} });
    const auth = await rejection(model.complete(request, signal()));
    expect(auth).toMatchObject({ code: "model_auth", status: 401 });
    expect(auth.message).toMatch(/Incorrect API key provided.*OPENAI_API_KEY/);

    handler = (_req, _body, res) => json(res, 404, { error: { message: "The model `m` does not exist" } });
    const missing = await rejection(model.complete(request, signal()));
    expect(missing).toMatchObject({ code: "model_rejected", status: 404 });
    expect(missing.message).toMatch(/does not exist/);
  });

  it("reports 5xx as the provider being unavailable", async () => {
    handler = (_req, _body, res) => {
      res.writeHead(503);
      res.end("upstream overloaded");
    };
    const error = await rejection(openAIModel({ baseUrl, model: "m", env: {} }).complete(request, signal()));
    expect(error).toMatchObject({ code: "model_unavailable", status: 503 });
    expect(error.message).toMatch(/upstream overloaded/);
  });

  it("rejects replies that are not JSON or not a chat completion", async () => {
    const model = openAIModel({ baseUrl, model: "m", env: {} });
    handler = (_req, _body, res) => res.end("<html>hello</html>");
    expect(await rejection(model.complete(request, signal()))).toMatchObject({ code: "model_malformed_reply" });
    handler = (_req, _body, res) => json(res, 200, { choices: [] });
    const empty = await rejection(model.complete(request, signal()));
    expect(empty.code).toBe("model_malformed_reply");
    expect(empty.message).toMatch(/choices/);
    handler = (_req, _body, res) =>
      json(res, 200, {
        choices: [{ message: { tool_calls: [{ id: "1", function: { name: "rm -rf", arguments: "{}" } }] } }],
      });
    expect((await rejection(model.complete(request, signal()))).message).toMatch(/no valid tool name/);
  });

  it("times out a server that does not answer", async () => {
    handler = () => {};
    const error = await rejection(
      openAIModel({ baseUrl, model: "m", timeoutMs: 50, env: {} }).complete(request, signal()),
    );
    expect(error.code).toBe("model_timeout");
  });

  it("rejects with the abort reason when the signal aborts", async () => {
    handler = () => {};
    const controller = new AbortController();
    const pending = openAIModel({ baseUrl, model: "m", env: {} }).complete(request, controller.signal);
    const reason = new Error("user cancelled");
    setTimeout(() => controller.abort(reason), 20);
    await expect(pending).rejects.toBe(reason);
  });

  it("reports an unreachable server", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const model = openAIModel({ baseUrl: `http://127.0.0.1:${port}/v1`, model: "m", env: {} });
    expect(await rejection(model.complete(request, signal()))).toMatchObject({ code: "model_unreachable" });
  });
});
