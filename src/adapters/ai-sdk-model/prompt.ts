import type { LanguageModelV4CallOptions, LanguageModelV4FunctionTool, LanguageModelV4Message } from "@ai-sdk/provider";
import type { ModelRequest } from "../../agent/index.js";
import type { Message } from "../../protocol/index.js";

/** isohook's model request as the call options of an AI SDK language model (provider spec v4). */
export function callOptionsOf(request: ModelRequest, abortSignal: AbortSignal): LanguageModelV4CallOptions {
  const options: LanguageModelV4CallOptions = { prompt: request.messages.map(promptMessage), abortSignal };
  const { temperature, maxTokens, toolChoice } = request.settings;
  if (temperature !== undefined) options.temperature = temperature;
  if (maxTokens !== undefined) options.maxOutputTokens = maxTokens;
  if (request.tools.length > 0) {
    options.tools = request.tools.map(
      (tool): LanguageModelV4FunctionTool => ({
        type: "function",
        name: tool.name,
        description: tool.description,
        // A tool's parameters are a JSON Schema object by the protocol's own check.
        inputSchema: tool.parameters as LanguageModelV4FunctionTool["inputSchema"],
      }),
    );
    if (toolChoice !== undefined)
      options.toolChoice =
        typeof toolChoice === "string" ? { type: toolChoice } : { type: "tool", toolName: toolChoice.name };
  }
  return options;
}

function promptMessage(message: Message): LanguageModelV4Message {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content };
    case "user":
      return { role: "user", content: [{ type: "text", text: message.content }] };
    case "assistant": {
      const content: Extract<LanguageModelV4Message, { role: "assistant" }>["content"] =
        message.content === "" ? [] : [{ type: "text", text: message.content }];
      for (const call of message.toolCalls ?? [])
        content.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: call.args });
      return { role: "assistant", content };
    }
    case "tool":
      return {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: message.toolCallId,
            toolName: message.name,
            output: message.isError
              ? { type: "error-text", value: message.content }
              : { type: "text", value: message.content },
          },
        ],
      };
    default: {
      const never: never = message;
      return never;
    }
  }
}
