import { z } from "zod";
import { type JsonObject, type Message, type ModelSettings, ToolName, type ToolSpec } from "../protocol/index.js";
import { deadline } from "./abort.js";
import type { FinishReason, Model, ModelReply, ModelRequest } from "./model.js";
import { ModelError } from "./model-error.js";

/** Options of the OpenAI-compatible provider; each falls back to its environment variable. */
export interface OpenAIModelOptions {
  /** Default `ISOHOOK_OPENAI_BASE_URL`, then `OPENAI_BASE_URL`, then `https://api.openai.com/v1`. */
  readonly baseUrl?: string;
  /** Default `ISOHOOK_OPENAI_API_KEY`, then `OPENAI_API_KEY`; no `Authorization` header without one. */
  readonly apiKey?: string;
  /** Default `ISOHOOK_OPENAI_MODEL`; required one way or the other. */
  readonly model?: string;
  /** Per request, body included. Default 60 000 ms. */
  readonly timeoutMs?: number;
  /** Where the env fallbacks are read; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

const Options = z.strictObject({
  baseUrl: z.url({ protocol: /^https?$/, error: "Expected `baseUrl` to be an http(s) URL" }),
  apiKey: z.string().min(1).optional(),
  model: z.string().min(1, "Expected a model id: pass `model` or set ISOHOOK_OPENAI_MODEL"),
  timeoutMs: z.number().int().min(1).max(600_000),
});

const Reply = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z
            .array(z.object({ id: z.string().min(1), function: z.object({ name: z.string(), arguments: z.string() }) }))
            .nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z
    .object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() })
    .nullish(),
});

/**
 * A model behind an OpenAI-compatible `POST {baseUrl}/chat/completions` endpoint (OpenAI, vLLM, Ollama,
 * llama.cpp, LiteLLM…), over the global `fetch`. Failures reject with a `ModelError`: `model_auth` (401/403),
 * `model_rejected` (other 4xx), `model_unavailable` (5xx), `model_malformed_reply`, `model_timeout`,
 * `model_unreachable`; an abort rejects with the signal's reason.
 *
 * ```ts
 * const model = openAIModel({ baseUrl: "http://127.0.0.1:11434/v1", model: "qwen2.5" });
 * ```
 */
export function openAIModel(options: OpenAIModelOptions = {}): Model {
  const env = options.env ?? process.env;
  const parsed = Options.safeParse({
    baseUrl: options.baseUrl ?? env.ISOHOOK_OPENAI_BASE_URL ?? env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
    apiKey: options.apiKey ?? env.ISOHOOK_OPENAI_API_KEY ?? env.OPENAI_API_KEY,
    model: options.model ?? env.ISOHOOK_OPENAI_MODEL ?? "",
    timeoutMs: options.timeoutMs ?? 60_000,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ModelError(
      "model_config",
      `Invalid OpenAI-compatible model options: ${issue?.message ?? "unknown issue"}`,
    );
  }
  const config = parsed.data;
  const url = `${config.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`;

  return {
    id: config.model,
    async complete(request: ModelRequest, signal: AbortSignal): Promise<ModelReply> {
      signal.throwIfAborted();
      const limit = deadline(signal, config.timeoutMs);
      let status: number;
      let text: string;
      try {
        const response = await fetch(url, {
          method: "POST",
          headers,
          body: JSON.stringify(toRequestBody(request)),
          signal: limit.signal,
        });
        status = response.status;
        text = await response.text();
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        if (limit.timedOut()) {
          throw new ModelError(
            "model_timeout",
            `${url} did not answer within ${config.timeoutMs} ms; raise \`timeoutMs\` or check the server`,
          );
        }
        throw new ModelError(
          "model_unreachable",
          `Could not reach ${url}: ${causeText(error)}. Check the base URL and that the server runs`,
          { cause: error },
        );
      } finally {
        limit.dispose();
      }
      if (status >= 400) throw httpError(url, status, text);
      return parseReply(url, text);
    },
  };
}

function toRequestBody(request: ModelRequest): JsonObject {
  const body: JsonObject = { model: request.model, messages: request.messages.map(toWireMessage) };
  if (request.tools.length > 0) body.tools = request.tools.map(toWireTool);
  const { temperature, maxTokens, toolChoice } = request.settings satisfies ModelSettings;
  if (temperature !== undefined) body.temperature = temperature;
  if (maxTokens !== undefined) body.max_tokens = maxTokens;
  if (toolChoice !== undefined && request.tools.length > 0) {
    body.tool_choice =
      typeof toolChoice === "string" ? toolChoice : { type: "function", function: { name: toolChoice.name } };
  }
  return body;
}

function toWireMessage(message: Message): JsonObject {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: message.content };
    case "assistant": {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: "assistant", content: message.content };
      return {
        role: "assistant",
        content: message.content === "" ? null : message.content,
        tool_calls: calls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: JSON.stringify(c.args) },
        })),
      };
    }
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
    default: {
      const never: never = message;
      return never;
    }
  }
}

function toWireTool(tool: ToolSpec): JsonObject {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

function httpError(url: string, status: number, body: string): ModelError {
  const detail = errorDetail(body);
  const said = detail ? `: ${detail}` : "";
  if (status === 401 || status === 403) {
    return new ModelError(
      "model_auth",
      `${url} refused the credentials (HTTP ${status})${said}. Check OPENAI_API_KEY`,
      { status },
    );
  }
  if (status < 500) {
    return new ModelError(
      "model_rejected",
      `${url} rejected the request (HTTP ${status})${said}. Check the model id and the request settings`,
      { status },
    );
  }
  return new ModelError(
    "model_unavailable",
    `${url} failed (HTTP ${status})${said}. The provider is down or overloaded; retry later`,
    { status },
  );
}

function errorDetail(body: string): string {
  let detail = body;
  try {
    const json: unknown = JSON.parse(body);
    const message = z.object({ error: z.object({ message: z.string() }) }).safeParse(json);
    if (message.success) detail = message.data.error.message;
  } catch {
    // Not JSON: the raw body, trimmed, is the best detail there is.
  }
  detail = detail.trim().replace(/\s+/g, " ");
  return detail.length > 300 ? `${detail.slice(0, 300)}…` : detail;
}

function parseReply(url: string, text: string): ModelReply {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ModelError(
      "model_malformed_reply",
      `${url} answered with something that is not JSON; is the base URL an OpenAI-compatible API?`,
    );
  }
  const reply = Reply.safeParse(json);
  if (!reply.success) {
    const issue = reply.error.issues[0];
    const at = issue ? `${issue.path.join(".") || "(root)"}: ${issue.message}` : "unknown issue";
    throw new ModelError(
      "model_malformed_reply",
      `${url} answered with no chat completion (${at}); is the base URL an OpenAI-compatible API?`,
    );
  }
  const choice = reply.data.choices[0];
  if (choice === undefined) throw new ModelError("model_malformed_reply", `${url} answered with no choices`);
  const malformedArgs: Record<string, string> = {};
  const toolCalls = (choice.message.tool_calls ?? []).map((call) => {
    if (!ToolName.safeParse(call.function.name).success) {
      throw new ModelError(
        "model_malformed_reply",
        `${url} answered with a tool call named \`${call.function.name.slice(0, 80)}\`, which is no valid tool name`,
      );
    }
    return { id: call.id, name: call.function.name, args: parseArgs(call.id, call.function.arguments, malformedArgs) };
  });
  const content = choice.message.content ?? "";
  const usage = reply.data.usage;
  const result: ModelReply = {
    message: toolCalls.length > 0 ? { role: "assistant", content, toolCalls } : { role: "assistant", content },
    usage: { inputTokens: usage?.prompt_tokens ?? 0, outputTokens: usage?.completion_tokens ?? 0 },
    finishReason: toolCalls.length > 0 ? "toolCalls" : finishReason(choice.finish_reason),
  };
  return Object.keys(malformedArgs).length > 0 ? { ...result, malformedArgs } : result;
}

function parseArgs(id: string, raw: string, malformed: Record<string, string>): JsonObject {
  if (raw.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as JsonObject;
    malformed[id] = "the arguments are JSON but no object";
  } catch {
    malformed[id] = "the arguments are not valid JSON";
  }
  return {};
}

function finishReason(raw: string | null | undefined): FinishReason {
  switch (raw) {
    case "length":
      return "length";
    case "tool_calls":
    case "function_call":
      return "toolCalls";
    default:
      return "stop";
  }
}

function causeText(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : "";
    return `${error.message}${cause}`;
  }
  return String(error);
}
