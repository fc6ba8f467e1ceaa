import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ScriptedTurn, type ScriptedTurnInput } from "../../src/agent/index.js";

/**
 * A local server speaking the OpenAI chat-completions protocol (`POST /v1/chat/completions`, JSON or SSE
 * with `stream: true`), answering each request with the next scripted turn: what a real provider package
 * talks to in tests, with no network. A turn streams its `reasoning` (as `reasoning_content`), its `chunks`
 * (or its text in 4-character pieces) and each tool call's arguments in 8-character slices. An entry may
 * instead be a `Misbehaviour` that answers however it likes (a 429, a dropped connection, garbage). It keeps
 * every request body it got and when it got it.
 */
export interface ChatCompletionsServer {
  /** The base URL a provider takes, ending in `/v1`. */
  readonly baseURL: string;
  readonly requests: readonly Record<string, unknown>[];
  /** `performance.now()` at each request's arrival. */
  readonly arrivals: readonly number[];
  close(): Promise<void>;
}

/** A hostile or failing answer: it writes the whole response itself. */
export type Misbehaviour = (res: ServerResponse, body: Record<string, unknown>) => void;

/** One SSE `data:` event of a chat-completion chunk with `delta`. */
export function sseChunk(delta: object, finishReason: string | null = null, extra: object = {}): string {
  const head = { id: "chatcmpl-x", created: 0, model: "m", object: "chat.completion.chunk" };
  return `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`;
}

/** A stream that never ends: SSE headers, then `write` every 2 ms until the client goes away (`closed`). */
export function endlessStream(write: (res: ServerResponse, n: number) => void): {
  handler: Misbehaviour;
  closed: Promise<void>;
} {
  let close = () => {};
  const closed = new Promise<void>((resolve) => {
    close = resolve;
  });
  const handler: Misbehaviour = (res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    let n = 0;
    const timer = setInterval(() => write(res, n++), 2);
    res.on("close", () => {
      clearInterval(timer);
      close();
    });
  };
  return { handler, closed };
}

export async function startChatCompletionsServer(
  turns: readonly (ScriptedTurnInput | Misbehaviour)[],
): Promise<ChatCompletionsServer> {
  const script = turns.map((turn) => (typeof turn === "function" ? turn : ScriptedTurn.parse(turn)));
  const requests: Record<string, unknown>[] = [];
  const arrivals: number[] = [];
  let next = 0;
  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => fail(res, 500, String(error)));
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") return fail(res, 404, `no route ${req.url}`);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    } catch {
      return fail(res, 400, "the body is not JSON");
    }
    requests.push(body);
    arrivals.push(performance.now());
    const index = next;
    const turn = script[index];
    if (turn === undefined) return fail(res, 500, `the script has no turn ${index + 1}`);
    next += 1;
    if (typeof turn === "function") return turn(res, body);
    const toolCalls = turn.toolCalls.map((call, i) => ({
      id: call.id ?? `call_${index + 1}_${i + 1}`,
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(call.args) },
    }));
    const finish = toolCalls.length > 0 ? "tool_calls" : "stop";
    const usage = { prompt_tokens: 10, completion_tokens: Math.ceil(turn.text.length / 4) };
    const head = { id: `chatcmpl-${index + 1}`, created: 0, model: String(body.model) };
    if (body.stream !== true) {
      const message = {
        role: "assistant",
        content: turn.text,
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      };
      const choice = { index: 0, message, finish_reason: finish };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ...head, object: "chat.completion", choices: [choice], usage: total(usage) }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const chunk = (delta: object, finishReason: string | null = null, extra: object = {}) =>
      res.write(
        `data: ${JSON.stringify({ ...head, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`,
      );
    chunk({ role: "assistant", content: "" });
    for (const piece of turn.reasoning ?? []) chunk({ reasoning_content: piece });
    for (const piece of turn.chunks ?? turn.text.match(/.{1,4}/gs) ?? []) chunk({ content: piece });
    toolCalls.forEach((call, i) => {
      const { arguments: args, ...named } = call.function;
      chunk({ tool_calls: [{ index: i, ...call, function: { ...named, arguments: "" } }] });
      for (const slice of args.match(/.{1,8}/gs) ?? [])
        chunk({ tool_calls: [{ index: i, function: { arguments: slice } }] });
    });
    chunk({}, finish, { usage: total(usage) });
    res.end("data: [DONE]\n\n");
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function total(usage: { prompt_tokens: number; completion_tokens: number }) {
  return { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
}

function fail(res: ServerResponse, status: number, message: string): void {
  if (!res.headersSent) res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message, type: "invalid_request_error" } }));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
