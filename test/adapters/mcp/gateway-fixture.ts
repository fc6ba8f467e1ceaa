import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";

/** What the MCP gateway tests share: the CLI's command line, the real upstream servers, a client. */

export const REPO = fileURLToPath(new URL("../../..", import.meta.url));
export const POLICY = "test/fixtures/mcp/policy";
/** `isohook mcp …` as a child process runs it. */
export const GATEWAY = ["--no-node-snapshot", "--import", "tsx", "src/cli/main.ts", "mcp"];
export const EVERYTHING = ["node", "node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"];
export const FILESYSTEM = ["node", "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"];

/** An MCP client; with `answer`, it declares elicitation and answers every approval request so. */
export function mcpClient(answer?: ElicitResult["action"]): Client {
  const client = new Client(
    { name: "gateway-test", version: "1" },
    { capabilities: answer === undefined ? {} : { elicitation: { form: {} } } },
  );
  if (answer !== undefined) client.setRequestHandler(ElicitRequestSchema, () => ({ action: answer, content: {} }));
  return client;
}

/** The text of a tool result's first block. */
export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content[0]?.text ?? "";
}

export interface HttpGateway {
  readonly url: string;
  readonly child: ChildProcessWithoutNullStreams;
  /** Every stdout line so far (the trace). */
  readonly stdout: () => string;
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `isohook mcp --listen 127.0.0.1:0 …` and waits for the line that names its URL. */
export async function startHttpGateway(args: readonly string[]): Promise<HttpGateway> {
  const child = spawn("node", [...GATEWAY, "--listen", "127.0.0.1:0", ...args], { cwd: REPO });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening on (\S+)/.exec(stdout);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    void exited.then((code) => reject(new Error(`the gateway exited (${code}): ${stderr}`)));
  });
  return {
    url,
    child,
    stdout: () => stdout,
    stop() {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

/** Connects a client to an HTTP gateway with a bearer token. */
export async function connectHttp(url: string, token: string, client = mcpClient()): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}
