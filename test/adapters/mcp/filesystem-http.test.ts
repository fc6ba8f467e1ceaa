import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectHttp,
  FILESYSTEM,
  type HttpGateway,
  mcpClient,
  POLICY,
  REPO,
  startHttpGateway,
  textOf,
} from "./gateway-fixture.js";

/**
 * `isohook mcp --listen` over Streamable HTTP in front of the reference server `server-filesystem`
 * (installed from npm): tenants from bearer tokens in a token file, the SDK's client and the MCP Inspector CLI.
 */

const ACME = "acme-token-0123456789abcdef";
const GLOBEX = "globex-token-0123456789abcdef";
let dir: string;
let files: string;
let gateway: HttpGateway;
let acme: Client;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-mcp-fs-"));
  files = join(dir, "files");
  await mkdir(files);
  await writeFile(join(files, "notes.txt"), "deploy key: sk-abcdefghijklmnop0123\nall good\n");
  await writeFile(join(files, "secret.txt"), "the launch codes\n");
  await writeFile(join(dir, "tokens"), `# token tenant\n${ACME} acme\n${GLOBEX} globex\n`);
  gateway = await startHttpGateway([
    "--tokens",
    join(dir, "tokens"),
    "--hook",
    POLICY,
    "--upstream",
    `files=${FILESYSTEM.join(" ")} ${files}`,
  ]);
  acme = await connectHttp(gateway.url, ACME, mcpClient("accept"));
}, 120_000);
afterAll(async () => {
  await acme?.close();
  const code = await gateway?.stop();
  expect(code).toBe(0);
  await rm(dir, { recursive: true, force: true });
});

describe("isohook mcp over Streamable HTTP, in front of server-filesystem", { timeout: 60_000 }, () => {
  it("answers a request without a valid token with 401, before any hook or upstream", async () => {
    const before = gateway.stdout();
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    };
    for (const authorization of [undefined, "Bearer not-a-known-token-at-all", `Basic ${ACME}`]) {
      const response = await fetch(gateway.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify(init),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe('Bearer realm="isohook"');
    }
    // No run started for them: the trace only grew by nothing.
    expect(gateway.stdout()).toBe(before);
  });

  it("lists the tools tools.prepare leaves and reads a file through the hooks, redacted", async () => {
    const { tools } = await acme.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain("read_text_file");
    expect(names).not.toContain("write_file");
    const read = await acme.callTool({ name: "read_text_file", arguments: { path: join(files, "notes.txt") } });
    expect(textOf(read)).toBe("deploy key: [REDACTED]\nall good\n");
  });

  it("blocks what the tenant keeps private, and a hidden tool stays uncallable", async () => {
    const secret = await acme.callTool({ name: "read_text_file", arguments: { path: join(files, "secret.txt") } });
    expect(textOf(secret)).toBe("blocked: secrets stay private");
    const write = await acme.callTool({ name: "write_file", arguments: { path: join(files, "x.txt"), content: "x" } });
    expect(textOf(write)).toBe("Unknown tool: write_file");
    expect(await readdir(files)).not.toContain("x.txt");
  });

  it("asks the client's user by elicitation and runs the call once approved", async () => {
    const made = await acme.callTool({ name: "create_directory", arguments: { path: join(files, "approved") } });
    expect(made.isError).not.toBe(true);
    expect(await readdir(files)).toContain("approved");
  });

  it("binds a session to its tenant: another tenant's token cannot use its session id", async () => {
    const globex = await connectHttp(gateway.url, GLOBEX);
    const sessionId = (acme.transport as { sessionId?: string } | undefined)?.sessionId;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const response = await fetch(gateway.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${GLOBEX}`,
        "mcp-session-id": sessionId ?? "",
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
    });
    expect(response.status).toBe(404);
    expect((await globex.listTools()).tools.length).toBeGreaterThan(0);
    await globex.close();
    expect(gateway.stdout()).toMatch(/▶ globex · run_/);
  });

  it("lists and calls a tool for the MCP Inspector CLI", async () => {
    const inspector = ["index.js", gateway.url, "--transport", "http"];
    const auth = ["--header", `Authorization: Bearer ${ACME}`];
    // Its check for its own package.json is relative to the working directory: run it from its build folder.
    const cwd = join(REPO, "node_modules/@modelcontextprotocol/inspector-cli/build");
    const run = (args: string[]) => promisify(execFile)("node", [...inspector, ...auth, ...args], { cwd });
    const listed = JSON.parse((await run(["--method", "tools/list"])).stdout) as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name)).toContain("list_directory");
    expect(listed.tools.map((t) => t.name)).not.toContain("write_file");
    const called = await run([
      "--method",
      "tools/call",
      "--tool-name",
      "read_text_file",
      "--tool-arg",
      `path=${join(files, "notes.txt")}`,
    ]);
    expect(JSON.parse(called.stdout)).toMatchObject({
      content: [{ type: "text", text: "deploy key: [REDACTED]\nall good\n" }],
    });
  });
});
