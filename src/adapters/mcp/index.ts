export { listenMcpHttp, type McpHttpGateway, type McpHttpOptions } from "./http.js";
export { type McpGatewayOptions, type McpSession, openMcpSession } from "./session.js";
export { type McpStdioOptions, serveMcpStdio } from "./stdio.js";
export { type Authenticate, readTokenFile, type TokenFile, tokensOf } from "./tokens.js";
export { McpGatewayError, parseUpstream, type Upstream, type UpstreamSpec } from "./upstream.js";
