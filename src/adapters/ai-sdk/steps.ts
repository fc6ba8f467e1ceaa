import { asSchema, type StepResult, type ToolSet } from "ai";
import { isJsonValue, type JsonObject, type ToolMessage, type ToolSpec } from "../../protocol/index.js";
import { capText, jsonText } from "./messages.js";
import type { GuardState } from "./state.js";

/**
 * The SDK's step loop mapped onto isohook's turns: `prepareStep` opens a turn and asks `tools.prepare`
 * which tools the model is offered; `onStepFinish` asks `turn.end` about the finished step; `stopWhen`
 * ends the loop once a hook stopped or ended the run.
 */

/** `prepareStep`: the next turn, and the tools its model call may use (`undefined`: all of them). */
export async function prepareTurn(state: GuardState): Promise<string[] | undefined> {
  state.nextTurn();
  state.turnOpen = true;
  if (state.halt !== undefined) return [];
  const tools = await specsOf(state);
  const { decision } = await state.run.dispatch("tools.prepare", { tools }, { signal: state.signal });
  if (decision.type === "stop") {
    state.stop(decision.reason);
    return [];
  }
  return decision.restricted ? decision.tools.map((tool) => tool.name) : undefined;
}

/** `onStepFinish`: `turn.end` with the step's message and tool results. */
export async function endTurn(state: GuardState, step: StepResult<ToolSet>): Promise<void> {
  const toolCalls = step.toolCalls.map((call) => ({
    id: call.toolCallId,
    name: call.toolName,
    args: (call.input ?? {}) as JsonObject,
  }));
  const message =
    toolCalls.length > 0
      ? { role: "assistant" as const, content: capText(step.text), toolCalls }
      : { role: "assistant" as const, content: capText(step.text) };
  const toolResults: ToolMessage[] = [];
  for (const part of step.content) {
    if (part.type !== "tool-result" && part.type !== "tool-error") continue;
    const isError = part.type === "tool-error";
    const value = part.type === "tool-result" ? part.output : part.error;
    const content = value instanceof Error ? value.message : jsonText(value);
    toolResults.push({
      role: "tool",
      toolCallId: part.toolCallId,
      name: part.toolName,
      content: capText(content),
      isError,
    });
  }
  const event = { turn: state.turn, message, toolResults };
  const { decision } = await state.run.dispatch("turn.end", event, { signal: state.signal });
  if (decision.type === "stop") state.stop(decision.reason);
  else if (decision.type === "end") state.stop(decision.reason ?? "a turn.end hook ended the run", "end");
}

/** What the model and the hooks see of each tool: name, description, JSON Schema of its input. */
function specsOf(state: GuardState): Promise<ToolSpec[]> {
  state.specs ??= Promise.all(
    Object.entries(state.tools).map(async ([name, tool]) => {
      const schema: unknown = await asSchema(tool.inputSchema).jsonSchema;
      const parameters =
        isJsonValue(schema) && typeof schema === "object" && schema !== null && !Array.isArray(schema) ? schema : {};
      return { name, description: capText(typeof tool.description === "string" ? tool.description : ""), parameters };
    }),
  );
  return state.specs;
}
