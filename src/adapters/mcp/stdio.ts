import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { type McpGatewayOptions, type McpSession, openMcpSession } from "./session.js";

/** Where the stdio gateway reads its one client (default: the process's stdin and stdout). */
export interface McpStdioOptions {
  readonly tenantId: string;
  readonly runId?: string;
  readonly input?: Readable;
  readonly output?: Writable;
  readonly signal?: AbortSignal;
}

/**
 * Serves one MCP client on stdio for one tenant: one session, one run. `closed` settles once the client
 * went away (its input ended) or `signal` aborted, and the run has ended.
 */
export async function serveMcpStdio(
  gateway: McpGatewayOptions,
  options: McpStdioOptions,
): Promise<{ readonly session: McpSession; readonly closed: Promise<void> }> {
  const input = options.input ?? process.stdin;
  const session = await openMcpSession(gateway, options);
  const transport = new StdioServerTransport(input, options.output ?? process.stdout, {
    maxBufferSize: gateway.maxMessageChars ?? 4_000_000,
  });
  const closed = new Promise<void>((resolve) => {
    session.server.onclose = () => void session.close().then(resolve, resolve);
  });
  const end = () => void session.server.close();
  input.once("end", end);
  input.once("close", end);
  options.signal?.addEventListener("abort", end, { once: true });
  await session.server.connect(transport);
  return { session, closed };
}
