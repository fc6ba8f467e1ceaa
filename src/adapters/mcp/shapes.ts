import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { type JsonObject, ToolName, ToolResult, type ToolSpec } from "../../protocol/index.js";

/**
 * MCP's shapes mapped onto isohook's at the gateway's edge: a listed tool becomes a `ToolSpec`, a
 * `tools/call` result a `ToolResult` (the text the client would read, and `structuredContent` as
 * `details`), and a patched `ToolResult` goes back into the MCP result the client receives.
 */

/** The `ToolSpec` hooks see for an MCP tool; undefined for a name isohook's tool names cannot carry. */
export function toolSpecOf(name: string, tool: McpTool): ToolSpec | undefined {
  if (!ToolName.safeParse(name).success) return undefined;
  return { name, description: tool.description ?? "", parameters: tool.inputSchema as JsonObject };
}

/** A text error result, as MCP gives a tool error to the model. */
export function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/**
 * The result as `tool.result` hooks see it: the text of its text blocks and embedded text resources, one per
 * line, and its structured content. An error result when the hooks could not be shown all of it (text past
 * the hook event's cap): a result the tenant's hooks cannot check never reaches the client.
 */
export function toolResultOf(result: CallToolResult): ToolResult | CallToolResult {
  const texts: string[] = [];
  for (const block of result.content) {
    if (block.type === "text") texts.push(block.text);
    else if (block.type === "resource" && "text" in block.resource) texts.push(block.resource.text);
  }
  const seen = {
    content: texts.join("\n"),
    isError: result.isError === true,
    ...(result.structuredContent === undefined ? {} : { details: result.structuredContent }),
  };
  const parsed = ToolResult.safeParse(seen);
  if (parsed.success) return parsed.data;
  const problem = parsed.error.issues[0]?.message ?? "not a tool result";
  return errorResult(`upstream result refused: the tenant's hooks cannot check it (${problem})`);
}

/** True for the `ToolResult` side of `toolResultOf`. */
export function isToolResult(value: ToolResult | CallToolResult): value is ToolResult {
  return typeof value.content === "string";
}

/**
 * The MCP result after `tool.result` patches. Patched text replaces every text block and embedded text
 * resource with one text block (so a redaction cannot be undone by another copy of the text); images,
 * audio and resource links stay. Patched `details` replace `structuredContent` (dropped unless an object).
 */
export function patchedResult(original: CallToolResult, seen: ToolResult, decided: ToolResult): CallToolResult {
  let content = original.content;
  if (decided.content !== seen.content) {
    const kept = original.content.filter((b) => b.type !== "text" && !(b.type === "resource" && "text" in b.resource));
    content = [{ type: "text", text: decided.content }, ...kept];
  }
  const { structuredContent: _dropped, ...rest } = original;
  let structured = original.structuredContent;
  if (JSON.stringify(decided.details) !== JSON.stringify(seen.details)) {
    const details = decided.details;
    structured =
      typeof details === "object" && details !== null && !Array.isArray(details)
        ? (details as Record<string, unknown>)
        : undefined;
  }
  return {
    ...rest,
    content,
    isError: decided.isError,
    ...(structured === undefined ? {} : { structuredContent: structured }),
  };
}
