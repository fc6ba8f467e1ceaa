import type {
  HookCallback,
  HookCallbackMatcher,
  HookEvent,
  HookInput,
  HookJSONOutput,
  PostToolUseHookInput,
  PreToolUseHookInput,
  StopHookInput,
  UserPromptSubmitHookInput,
} from "@anthropic-ai/claude-agent-sdk";
import type { HookRun, ToolCall } from "isohook/loop";

/**
 * A tenant's sandboxed isohook hooks as the Claude Agent SDK's hook callbacks: pass the result as
 * `query({ prompt, options: { hooks: isohookHooks(openRun) } })`. One isohook run per Claude session.
 *
 *   UserPromptSubmit → input.inbound   (drop blocks the prompt, stop ends the session)
 *   PreToolUse       → tool.call       (block denies, ask asks, rewrite updates the input)
 *   PostToolUse      → tool.result     (patch replaces the output the model reads)
 *   Stop             → turn.end        (continue keeps Claude working with the hook's message)
 */
export function isohookHooks(
  openRun: (sessionId: string) => Promise<HookRun>,
): Partial<Record<HookEvent, HookCallbackMatcher[]>> {
  const runs = new Map<string, Promise<HookRun>>();
  const turns = new Map<string, number>();
  const runOf = (input: HookInput) => {
    let run = runs.get(input.session_id);
    if (run === undefined) {
      run = openRun(input.session_id);
      runs.set(input.session_id, run);
    }
    return run;
  };
  const on = (handle: (input: HookInput, signal: AbortSignal) => Promise<HookJSONOutput>): HookCallbackMatcher[] => {
    const hook: HookCallback = (input, _toolUseId, { signal }) => handle(input, signal);
    return [{ hooks: [hook] }];
  };
  return {
    UserPromptSubmit: on(async (input, signal) => {
      const { session_id, prompt } = input as UserPromptSubmitHookInput;
      const run = await runOf(input);
      const turn = (turns.get(session_id) ?? 0) + 1;
      turns.set(session_id, turn);
      run.beginTurn(turn);
      const message = { role: "user" as const, content: prompt };
      const { decision } = await run.dispatch("input.inbound", { source: "user", message }, { signal });
      if (decision.type === "stop") return { continue: false, stopReason: decision.reason };
      if (decision.type === "drop") return { decision: "block", reason: decision.reason };
      return {};
    }),
    PreToolUse: on(async (input, signal) => {
      const { tool_name, tool_input, tool_use_id } = input as PreToolUseHookInput;
      const run = await runOf(input);
      const call = { id: tool_use_id, name: tool_name, args: objectOf(tool_input) };
      const { decision } = await run.dispatch("tool.call", { call, batch: { index: 0, size: 1 } }, { signal });
      const out = (permissionDecision: "deny" | "ask", reason: string): HookJSONOutput => ({
        hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision, permissionDecisionReason: reason },
      });
      switch (decision.type) {
        case "stop":
          return { continue: false, stopReason: decision.reason };
        case "block":
          return out("deny", decision.reason);
        case "ask":
          return out("ask", decision.question ?? decision.reason);
        case "execute":
          return decision.rewritten
            ? { hookSpecificOutput: { hookEventName: "PreToolUse", updatedInput: decision.args } }
            : {};
      }
    }),
    PostToolUse: on(async (input, signal) => {
      const { tool_name, tool_input, tool_use_id, tool_response } = input as PostToolUseHookInput;
      const run = await runOf(input);
      const call = { id: tool_use_id, name: tool_name, args: objectOf(tool_input) };
      const content = typeof tool_response === "string" ? tool_response : JSON.stringify(tool_response);
      const result = { content, isError: false };
      const { decision } = await run.dispatch("tool.result", { call, executed: true, result }, { signal });
      if (decision.type === "stop") return { continue: false, stopReason: decision.reason };
      const stop = decision.terminate ? { continue: false, stopReason: `${tool_name}: the hook ended the run` } : {};
      if (!decision.patched) return stop;
      return {
        ...stop,
        hookSpecificOutput: { hookEventName: "PostToolUse", updatedToolOutput: decision.result.content },
      };
    }),
    Stop: on(async (input, signal) => {
      const { session_id, last_assistant_message } = input as StopHookInput;
      const run = await runOf(input);
      const message = { role: "assistant" as const, content: last_assistant_message ?? "" };
      const turn = turns.get(session_id) ?? 0;
      const { decision } = await run.dispatch("turn.end", { turn, message, toolResults: [] }, { signal });
      // Claude's `block` on Stop means "keep working", with the reason as the next instruction.
      if (decision.type === "continue") return { decision: "block", reason: decision.message ?? "Keep working." };
      if (decision.type === "stop") return { continue: false, stopReason: decision.reason };
      return {};
    }),
  };
}

/** Claude's tool input as the JSON object a hook reads (anything else: the empty object). */
function objectOf(value: unknown): ToolCall["args"] {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (JSON.parse(JSON.stringify(value)) as ToolCall["args"])
    : {};
}
