import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVERYTHING, GATEWAY, mcpClient, POLICY, REPO, textOf } from "./gateway-fixture.js";

/**
 * `isohook mcp --tenant` on stdio in front of the reference server `server-everything` (installed from npm),
 * with the SDK's own client: the tenant's hooks hide, block, rewrite, ask and redact.
 */

function gateway(answer?: "accept" | "decline") {
  let stderr = "";
  const transport = new StdioClientTransport({
    command: "node",
    args: [...GATEWAY, "--tenant", "acme", "--hook", POLICY, "--", ...EVERYTHING],
    cwd: REPO,
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return { client: mcpClient(answer), transport, stderr: () => stderr };
}

let plain: ReturnType<typeof gateway>;
let asking: ReturnType<typeof gateway>;

beforeAll(async () => {
  plain = gateway();
  asking = gateway("accept");
  await Promise.all([plain.client.connect(plain.transport), asking.client.connect(asking.transport)]);
}, 120_000);
afterAll(async () => {
  await plain?.client.close();
  await asking?.client.close();
});

describe("isohook mcp on stdio, in front of server-everything", { timeout: 60_000 }, () => {
  it("lists only the tools tools.prepare leaves, and a hidden tool answers as one that does not exist", async () => {
    const { tools } = await plain.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain("echo");
    expect(names).toContain("get-structured-content");
    expect(names).not.toContain("get-env");
    const hidden = await plain.client.callTool({ name: "get-env", arguments: {} });
    const missing = await plain.client.callTool({ name: "no-such-tool", arguments: {} });
    expect(hidden).toEqual({ content: [{ type: "text", text: "Unknown tool: get-env" }], isError: true });
    expect(textOf(missing)).toBe("Unknown tool: no-such-tool");
  });

  it("forwards a call the hooks let through, and the rewritten arguments of one they rewrite", async () => {
    expect(textOf(await plain.client.callTool({ name: "echo", arguments: { message: "hello" } }))).toBe("Echo: hello");
    const rewritten = await plain.client.callTool({ name: "echo", arguments: { message: "rewrite me" } });
    expect(textOf(rewritten)).toBe("Echo: rewritten by the tenant");
  });

  it("answers a blocked call with an MCP tool error that gives the reason", async () => {
    const blocked = await plain.client.callTool({ name: "echo", arguments: { message: "forbidden" } });
    expect(blocked).toEqual({
      content: [{ type: "text", text: "blocked: the word 'forbidden' is not allowed" }],
      isError: true,
    });
  });

  it("refuses a rewrite that breaks the tool's inputSchema: the failing hook blocks under tool.call's closed policy", async () => {
    const broken = await plain.client.callTool({ name: "echo", arguments: { message: "break the schema" } });
    expect(broken).toMatchObject({ isError: true, content: [{ text: "blocked: invalid_result" }] });
    expect(plain.stderr()).toContain("do not fit the tool's schema");
  });

  it("refuses an ask as a block when the client cannot be asked, and asks by elicitation when it can", async () => {
    const refused = await plain.client.callTool({ name: "get-sum", arguments: { a: 101, b: 1 } });
    expect(textOf(refused)).toBe(
      "blocked: big sums need approval (the call needs approval, and this MCP client does not support elicitation)",
    );
    const approved = await asking.client.callTool({ name: "get-sum", arguments: { a: 101, b: 1 } });
    expect(approved.isError).not.toBe(true);
    expect(textOf(approved)).toContain("102");
  });

  it("redacts the text and the structured content the client sees, still matching the tool's outputSchema", async () => {
    const result = await plain.client.callTool({ name: "get-structured-content", arguments: { location: "New York" } });
    expect(result.structuredContent).toEqual({ temperature: 33, conditions: "[REDACTED]", humidity: 82 });
    expect(textOf(result)).toBe('{"temperature":33,"conditions":"[REDACTED]","humidity":82}');
    expect(JSON.stringify(result)).not.toContain("Cloudy");
  });

  it("traces every decision of the session's one run on stderr", () => {
    const trace = plain.stderr();
    expect(trace.match(/▶ acme · run_/g)).toHaveLength(1);
    expect(trace).toMatch(/tools\.prepare\s+tenant:acme@v1\s+restrict/);
    expect(trace).toMatch(/tool\.result\s+tenant:acme@v1\s+patch content, details/);
  });

  it("ends the session's run when a hook stops it: later calls are refused", async () => {
    const stopped = await asking.client.callTool({ name: "echo", arguments: { message: "stop the run" } });
    expect(textOf(stopped)).toBe("stopped: the tenant ends this session");
    const after = await asking.client.callTool({ name: "echo", arguments: { message: "hello" } });
    expect(textOf(after)).toBe("stopped: the tenant ends this session (open a new MCP session)");
    expect((await asking.client.listTools()).tools).toEqual([]);
  });
});
