import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { type CallToolResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject, ToolCall, ToolResult } from "../../protocol/index.js";
import type { HookRun } from "../../runtime/index.js";
import { errorResult, isToolResult, patchedResult, toolResultOf } from "./shapes.js";
import type { CatalogTool } from "./tool-catalog.js";

/** What one `tools/call` needs from its session. */
export interface CallScope {
  readonly run: HookRun;
  readonly server: Server;
  readonly callTimeoutMs: number;
  readonly askTimeoutMs: number;
  readonly maxMessageChars: number;
  /** Ends the session's run with `stopped`: a hook's `stop` decision. */
  readonly stop: (reason: string) => void;
}

const APPROVAL_SCHEMA = { type: "object", properties: {} } as const;

/**
 * One `tools/call` through the tenant's hooks: `tool.call` (block, rewrite re-validated against the tool's
 * `inputSchema`, ask by MCP elicitation), the upstream, then `tool.result` on what the client would see
 * (also on a refused call's error, `executed: false`, as in isohook's loop). A `stop` ends the session's run.
 */
export async function callThroughHooks(
  scope: CallScope,
  entry: CatalogTool,
  call: ToolCall,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const { run } = scope;
  const { decision } = await run.dispatch(
    "tool.call",
    { call, batch: { index: 0, size: 1 } },
    { signal, validateArgs: entry.checkArgs },
  );
  switch (decision.type) {
    case "stop":
      scope.stop(decision.reason);
      return errorResult(`stopped: ${decision.reason}`);
    case "block":
      return checked(
        scope,
        entry,
        { ...call, args: decision.args },
        errorResult(`blocked: ${decision.reason}`),
        false,
        signal,
      );
    case "ask": {
      const refusal = await approve(scope, decision.question ?? decision.reason, decision.reason, signal);
      const effective = { ...call, args: decision.args };
      if (refusal !== undefined) return checked(scope, entry, effective, errorResult(refusal), false, signal);
      return checked(scope, entry, effective, await upstreamCall(scope, entry, decision.args, signal), true, signal);
    }
    case "execute": {
      const effective = { ...call, args: decision.args };
      return checked(scope, entry, effective, await upstreamCall(scope, entry, decision.args, signal), true, signal);
    }
    default: {
      const never: never = decision;
      return never;
    }
  }
}

/** Asks the client's user through MCP elicitation; the refusal text, or undefined when approved. */
async function approve(scope: CallScope, question: string, reason: string, signal: AbortSignal) {
  if (scope.server.getClientCapabilities()?.elicitation === undefined)
    return `blocked: ${reason} (the call needs approval, and this MCP client does not support elicitation)`;
  try {
    const answer = await scope.server.elicitInput(
      { mode: "form", message: question, requestedSchema: APPROVAL_SCHEMA },
      { signal, timeout: scope.askTimeoutMs },
    );
    return answer.action === "accept" ? undefined : `rejected: the user answered ${answer.action}`;
  } catch (error) {
    signal.throwIfAborted();
    // No answer is no approval.
    return `rejected: the approval request failed (${error instanceof Error ? error.message : String(error)})`;
  }
}

async function upstreamCall(
  scope: CallScope,
  entry: CatalogTool,
  args: JsonObject,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const upstream = entry.upstream.spec.name;
  let result: CallToolResult;
  try {
    result = (await entry.upstream.client.callTool({ name: entry.tool.name, arguments: args }, undefined, {
      signal,
      timeout: scope.callTimeoutMs,
    })) as CallToolResult;
  } catch (error) {
    signal.throwIfAborted();
    return errorResult(upstreamFailure(upstream, error, scope.callTimeoutMs));
  }
  // A stdio upstream's messages are capped as they arrive; an HTTP upstream's whole result is checked here.
  const size = JSON.stringify(result).length;
  if (size > scope.maxMessageChars)
    return errorResult(
      `upstream ${upstream} failed: its result has ${size} characters, over the cap of ${scope.maxMessageChars}`,
    );
  return result;
}

function upstreamFailure(upstream: string, error: unknown, timeoutMs: number): string {
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout)
    return `upstream ${upstream} failed: no answer within ${timeoutMs} ms`;
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)
    return `upstream ${upstream} failed: it closed the connection (it exited or crashed)`;
  const message = error instanceof Error ? error.message : String(error);
  return `upstream ${upstream} failed: ${message}`;
}

/** `tool.result` on the result the client would get; patches applied, structured content re-checked. */
async function checked(
  scope: CallScope,
  entry: CatalogTool,
  call: ToolCall,
  result: CallToolResult,
  executed: boolean,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const seen = toolResultOf(result);
  if (!isToolResult(seen)) return seen;
  const { decision } = await scope.run.dispatch("tool.result", { call, executed, result: seen }, { signal });
  if (decision.type === "stop") {
    scope.stop(decision.reason);
    return errorResult(`stopped: ${decision.reason}`);
  }
  if (!decision.patched) return result;
  return revalidated(entry, patchedResult(result, seen, decision.result as ToolResult));
}

function revalidated(entry: CatalogTool, result: CallToolResult): CallToolResult {
  if (entry.checkOutput === undefined || result.isError === true) return result;
  const problem =
    result.structuredContent === undefined
      ? "it has no structured content"
      : entry.checkOutput(result.structuredContent);
  if (problem === undefined) return result;
  return errorResult(`the tenant's tool.result patch no longer matches the tool's outputSchema: ${problem}`);
}

/** A request the session refuses before any hook: MCP's invalid-params error. */
export function invalidParams(message: string): McpError {
  return new McpError(ErrorCode.InvalidParams, message);
}
