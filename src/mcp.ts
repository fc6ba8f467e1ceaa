/**
 * `isohook/mcp`: the MCP policy gateway as a library. Tenants' hooks sit between an MCP client and upstream
 * MCP servers: `tools/list` through `tools.prepare`, `tools/call` through `tool.call`, the upstream and
 * `tool.result`, one run per MCP session. Needs the optional peer dependency `@modelcontextprotocol/sdk`.
 *
 * ```ts
 * const gateway = await listenMcpHttp(
 *   { runtime, upstreams: [parseUpstream("files=npx @modelcontextprotocol/server-filesystem /srv")] },
 *   { host: "127.0.0.1", port: 8808, authenticate: (token) => platform.tenantOf(token) },
 * );
 * ```
 */
export {
  type Authenticate,
  listenMcpHttp,
  McpGatewayError,
  type McpGatewayOptions,
  type McpHttpGateway,
  type McpHttpOptions,
  type McpSession,
  type McpStdioOptions,
  openMcpSession,
  parseUpstream,
  readTokenFile,
  serveMcpStdio,
  type TokenFile,
  tokensOf,
  type Upstream,
  type UpstreamSpec,
} from "./adapters/mcp/index.js";
