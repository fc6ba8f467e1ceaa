import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type ListToolsResult,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { HookEvent, JsonObject } from "../../protocol/index.js";
import type { HookRun, HookRuntime, RunEvent } from "../../runtime/index.js";
import { errorResult } from "./shapes.js";
import { callThroughHooks } from "./tool-call.js";
import { type CatalogTool, ToolCatalog } from "./tool-catalog.js";
import { connectUpstream, McpGatewayError, type Upstream, type UpstreamSpec } from "./upstream.js";

/** What every session of a gateway shares: the runtime that decides, the upstreams, the limits. */
export interface McpGatewayOptions {
  readonly runtime: Pick<HookRuntime, "openRun">;
  /** The MCP servers behind the gateway; several get their tools prefixed `NAME__`. */
  readonly upstreams: readonly UpstreamSpec[];
  /** How long an upstream gets to start, list its tools or answer one call. Default 30 000 ms. */
  readonly callTimeoutMs?: number;
  /** How long the client's user gets to answer an `ask`. Default 300 000 ms. */
  readonly askTimeoutMs?: number;
  /** The cap on one upstream message or result, in characters. Default 4 000 000. */
  readonly maxMessageChars?: number;
  /** Every session's run events (`run.started`, `hooks.decided`, `hook.called`, …). */
  readonly onEvent?: (event: RunEvent) => void;
  /** An upstream's stderr, line by line. Default: dropped. */
  readonly onStderr?: (upstream: string, line: string) => void;
}

/** One client's MCP session: its MCP server side, the tenant's run, its own upstream connections. */
export interface McpSession {
  readonly server: Server;
  readonly run: HookRun;
  readonly upstreams: readonly Upstream[];
  /** Ends the run (`run.end`) and closes the upstreams; idempotent. */
  close(): Promise<void>;
}

const DEFAULTS = { callTimeoutMs: 30_000, askTimeoutMs: 300_000, maxMessageChars: 4_000_000 } as const;

/**
 * Opens one MCP session for a tenant: a run (`runtime.openRun`), a connection to each upstream, and an MCP
 * server whose `tools/list` goes through `tools.prepare` and whose `tools/call` goes through `tool.call`,
 * the upstream and `tool.result`. Connect `server` to the client's transport; `close` when it closes.
 */
export async function openMcpSession(
  gateway: McpGatewayOptions,
  who: { readonly tenantId: string; readonly runId?: string; readonly signal?: AbortSignal },
): Promise<McpSession> {
  const limits = { ...DEFAULTS, ...definedOnly(gateway) };
  if (gateway.upstreams.length === 0)
    throw new McpGatewayError("invalid_options", "Give the gateway at least one upstream MCP server");
  const run = await gateway.runtime.openRun({
    tenantId: who.tenantId,
    ...(who.runId === undefined ? {} : { runId: who.runId }),
    ...(gateway.onEvent === undefined ? {} : { onEvent: gateway.onEvent }),
  });
  const upstreams: Upstream[] = [];
  let stopReason: HookEvent<"run.end">["stopReason"] = "completed";
  const close = once(async () => {
    await Promise.allSettled(upstreams.map((u) => u.close()));
    await run.end({ stopReason, turns: turn, usage: { inputTokens: 0, outputTokens: 0 } });
  });
  let turn = 0;
  try {
    for (const spec of gateway.upstreams) {
      upstreams.push(
        await connectUpstream(spec, {
          maxMessageChars: limits.maxMessageChars,
          timeoutMs: limits.callTimeoutMs,
          ...(gateway.onStderr === undefined ? {} : { onStderr: gateway.onStderr }),
          ...(who.signal === undefined ? {} : { signal: who.signal }),
        }),
      );
    }
  } catch (error) {
    stopReason = "error";
    await close();
    throw error;
  }
  const server = new Server(
    { name: "isohook-mcp-gateway", version: "1" },
    { capabilities: { tools: { listChanged: true } } },
  );
  const catalog = new ToolCatalog(upstreams);
  let visible: Promise<ReadonlySet<string>> | undefined;
  let stopped: string | undefined;
  for (const upstream of upstreams) {
    upstream.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      catalog.invalidate();
      visible = undefined;
      await server.sendToolListChanged().catch(() => undefined);
    });
  }
  const stop = (reason: string) => {
    stopped ??= reason;
    stopReason = "stopped";
  };
  const listed = (signal: AbortSignal) => catalog.tools({ signal, timeoutMs: limits.callTimeoutMs });
  /** `tools.prepare` on every listed tool: the names the client may see and call, until the list changes. */
  const prepare = async (signal: AbortSignal): Promise<ReadonlySet<string>> => {
    const tools = [...(await listed(signal)).values()];
    run.beginTurn(++turn);
    const { decision } = await run.dispatch("tools.prepare", { tools: tools.map((t) => t.spec) }, { signal });
    if (decision.type === "stop") {
      stop(decision.reason);
      return new Set();
    }
    return new Set(decision.tools.map((t) => t.name));
  };
  const visibleTools = (signal: AbortSignal) => {
    const current = visible ?? prepare(signal);
    visible = current;
    current.catch(() => {
      if (visible === current) visible = undefined;
    });
    return current;
  };

  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra): Promise<ListToolsResult> => {
    if (stopped !== undefined) return { tools: [] };
    visible = undefined;
    const names = await visibleTools(extra.signal);
    const tools = [...(await listed(extra.signal)).values()].filter((t) => names.has(t.name));
    return { tools: tools.map((t) => ({ ...t.tool, name: t.name })) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    if (stopped !== undefined) return errorResult(`stopped: ${stopped} (open a new MCP session)`);
    const { name } = request.params;
    const names = await visibleTools(extra.signal);
    const entry: CatalogTool | undefined = names.has(name) ? (await listed(extra.signal)).get(name) : undefined;
    // A hidden tool answers exactly as one that does not exist.
    if (entry === undefined) return errorResult(`Unknown tool: ${name}`);
    run.beginTurn(++turn);
    const call = { id: `mcp_${String(extra.requestId)}`, name, args: (request.params.arguments ?? {}) as JsonObject };
    const scope = { run, server, ...limits, stop };
    return callThroughHooks(scope, entry, call, extra.signal);
  });

  return { server, run, upstreams, close };
}

function definedOnly(options: McpGatewayOptions) {
  const { callTimeoutMs, askTimeoutMs, maxMessageChars } = options;
  return {
    ...(callTimeoutMs === undefined ? {} : { callTimeoutMs }),
    ...(askTimeoutMs === undefined ? {} : { askTimeoutMs }),
    ...(maxMessageChars === undefined ? {} : { maxMessageChars }),
  };
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= fn();
    return done;
  };
}
