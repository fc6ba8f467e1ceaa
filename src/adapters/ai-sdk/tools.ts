import { asSchema, type ToolExecutionOptions, type ToolSet } from "ai";
import type { ToolCallDecision } from "../../dispatch/index.js";
import { type JsonObject, type ToolCall, ToolName, type ToolResult } from "../../protocol/index.js";
import { RuntimeError } from "../../runtime/index.js";
import { toolResultOf } from "./messages.js";
import type { GuardState } from "./state.js";

/**
 * Each tool wrapped so that `tool.call` decides it (block, rewrite re-validated against the tool's own
 * `inputSchema`, `ask` as the SDK's tool approval) and `tool.result` patches what the model sees.
 * `tool.call` is dispatched once per call: when the SDK asks `needsApproval`, and its decision is used when
 * the SDK executes the call (after a human approved it, for an ask).
 */
export function guardTools<T extends ToolSet>(state: GuardState, tools: T): T {
  for (const name of Object.keys(tools))
    if (!ToolName.safeParse(name).success)
      throw new RuntimeError(
        "invalid_options",
        `Expected tool names hooks can read (letters, digits, '_', '.', '-'; at most 128), got \`${name.slice(0, 140)}\`: rename the tool`,
      );
  state.setTools(tools);
  const guarded: ToolSet = {};
  for (const [name, tool] of Object.entries(tools)) guarded[name] = guardTool(state, name, tool);
  return guarded as T;
}

/** A tool call a hook refused or a tool that failed, as the SDK's tool error the model reads. */
/** Any tool of a tool set, as the SDK types it. */
type Tool = ToolSet[string];
type ApprovalOptions = Parameters<Extract<Tool["needsApproval"], (...args: never[]) => unknown>>[1];

export class ToolRefusedError extends Error {
  override readonly name = "ToolRefusedError";
}

function guardTool(state: GuardState, name: string, tool: Tool): Tool {
  const decide = async (input: unknown, toolCallId: string, signal: AbortSignal | undefined) => {
    const known = state.decisions.get(toolCallId);
    if (known !== undefined) return known;
    const call: ToolCall = { id: toolCallId, name, args: input as JsonObject };
    const batch = state.batches.get(toolCallId) ?? { index: 0, size: 1 };
    const validateArgs = (args: JsonObject) => syncProblem(tool, args);
    const dispatchSignal = signal ?? state.signal;
    const { decision } = await state.run.dispatch(
      "tool.call",
      { call, batch },
      { signal: dispatchSignal, validateArgs },
    );
    state.decisions.set(toolCallId, decision);
    if (decision.type === "stop") state.stop(decision.reason);
    return decision;
  };
  const own = tool.needsApproval;
  const wrapped: Tool = {
    ...tool,
    needsApproval: async (input: unknown, options: ApprovalOptions) => {
      const asked = typeof own === "function" ? await own(input as never, options) : own === true;
      const decision = await decide(input, options.toolCallId, undefined);
      return asked || decision.type === "ask";
    },
  };
  const execute = tool.execute;
  if (execute === undefined) return wrapped;
  wrapped.execute = async (input: unknown, options: ToolExecutionOptions<unknown>) => {
    const decision = await decide(input, options.toolCallId, options.abortSignal);
    state.decisions.delete(options.toolCallId);
    const ran = await runDecided(tool, execute, decision, input, options);
    if (ran === undefined) throw new ToolRefusedError(`stopped: ${(decision as { reason: string }).reason}`);
    const call: ToolCall = { id: options.toolCallId, name, args: ran.args };
    const event = { call, executed: ran.executed, result: ran.result };
    const { decision: after } = await state.run.dispatch("tool.result", event, { signal: options.abortSignal });
    if (after.type === "stop") {
      state.stop(after.reason);
      throw new ToolRefusedError(`stopped: ${after.reason}`);
    }
    if (after.terminate) state.stop(`tool.result ended the run after ${name}`, "end");
    if (after.result.isError) throw new ToolRefusedError(after.result.content);
    return after.patched ? after.result.content : ran.output;
  };
  return wrapped;
}

interface Ran {
  readonly args: JsonObject;
  readonly executed: boolean;
  readonly result: ToolResult;
  readonly output?: unknown;
}

/** The call as `tool.call` decided it: refused with the loop's wording, or run with its effective args. */
async function runDecided(
  tool: Tool,
  execute: NonNullable<Tool["execute"]>,
  decision: ToolCallDecision,
  input: unknown,
  options: ToolExecutionOptions<unknown>,
): Promise<Ran | undefined> {
  switch (decision.type) {
    case "stop":
      return undefined;
    case "block":
      return { args: decision.args, executed: false, result: refused(`blocked: ${decision.reason}`) };
    case "ask":
    case "execute": {
      let args = input;
      if (decision.rewritten) {
        const checked = await asSchema(tool.inputSchema).validate?.(decision.args);
        if (checked !== undefined && !checked.success)
          return {
            args: decision.args,
            executed: false,
            result: refused(`invalid tool call: ${checked.error.message}`),
          };
        args = checked?.value ?? decision.args;
      }
      try {
        const output = await resolveOutput(execute(args as never, options));
        return { args: decision.args, executed: true, result: toolResultOf(output), output };
      } catch (error) {
        options.abortSignal?.throwIfAborted();
        const message = error instanceof Error ? error.message : String(error);
        return { args: decision.args, executed: true, result: refused(`error: ${message}`) };
      }
    }
    default: {
      const never: never = decision;
      return never;
    }
  }
}

function refused(content: string): ToolResult {
  return { content, isError: true };
}

/** A tool's `execute` may stream its output (an async iterable): its last value is the result. */
async function resolveOutput(output: unknown): Promise<unknown> {
  if (output !== null && typeof output === "object" && Symbol.asyncIterator in output) {
    let last: unknown;
    for await (const value of output as AsyncIterable<unknown>) last = value;
    return last;
  }
  return output;
}

/**
 * A rewrite checked against the tool's schema before the hook's decision counts, as isohook's loop checks
 * it: Standard Schema validators (zod, valibot, arktype) answer synchronously; a schema that only validates
 * asynchronously is checked after the decision, when the call runs.
 */
function syncProblem(tool: Tool, args: JsonObject): string | undefined {
  const schema = tool.inputSchema as { "~standard"?: { validate(value: unknown): unknown } };
  const checked = schema["~standard"]?.validate(args);
  if (checked === undefined || checked instanceof Promise) return undefined;
  const issues = (checked as { issues?: readonly { message: string; path?: readonly unknown[] }[] }).issues;
  if (issues === undefined) return undefined;
  return issues
    .map(
      (issue) =>
        `${(issue.path ?? []).map((p) => (typeof p === "object" ? (p as { key: unknown }).key : p)).join(".")}: ${issue.message}`,
    )
    .join("; ");
}
