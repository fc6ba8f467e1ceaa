import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { listenMcpHttp } from "../../src/adapters/mcp/index.js";
import type { DecisionPath, ScenarioTool } from "./decision-paths.js";

/**
 * The MCP policy gateway as a row of the decision comparison: a real MCP client speaks Streamable HTTP to
 * the gateway (`listenMcpHttp`, bearer token → tenant), which speaks it to a real MCP server holding the
 * scenario's tools. An MCP client is the agent here: each scripted turn it lists the tools and calls the
 * turn's tool calls one by one. MCP has no model, so only the tool points are reached.
 */
export const mcpGateway: DecisionPath = {
  name: "MCP gateway (Streamable HTTP client, gateway and upstream server)",
  reaches: ["tools.prepare", "tool.call", "tool.result"],
  toolCalls: "sequential",
  async drive(runtime, tenantId, scenario, onEvent) {
    const upstream = await serveTools(scenario.tools);
    const token = "decision-paths-token-0123456789";
    const gateway = await listenMcpHttp(
      { runtime, upstreams: [{ type: "url", name: "tools", url: upstream.url }], onEvent },
      { host: "127.0.0.1", port: 0, authenticate: (given) => (given === token ? tenantId : undefined) },
    );
    const client = new Client({ name: "decision-paths", version: "1" });
    try {
      const headers = { authorization: `Bearer ${token}` };
      await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url), { requestInit: { headers } }));
      for (const turn of scenario.turns) {
        await client.listTools();
        for (const call of turn.toolCalls ?? []) await client.callTool({ name: call.name, arguments: call.args });
      }
    } finally {
      await client.close();
      await gateway.close();
      await upstream.close();
    }
  },
};

/** A stateless Streamable HTTP MCP server on 127.0.0.1 whose tools are the scenario's. */
async function serveTools(tools: readonly ScenarioTool[]): Promise<{ url: string; close(): Promise<void> }> {
  const mcpServer = () => {
    const server = new Server({ name: "scenario-tools", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: tools.map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: z.toJSONSchema(t.parameters) as { type: "object" },
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      const tool = tools.find((t) => t.name === request.params.name);
      if (tool === undefined) return { content: [{ type: "text", text: "no such tool" }], isError: true };
      return { content: [{ type: "text", text: tool.run(request.params.arguments ?? {}) }] };
    });
    return server;
  };
  const http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      const server = mcpServer();
      const transport = new StreamableHTTPServerTransport({});
      res.on("close", () => void server.close());
      await server.connect(transport);
      const body = chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8"));
      await transport.handleRequest(req, res, body);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
