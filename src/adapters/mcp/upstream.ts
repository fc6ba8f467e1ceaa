import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UpstreamProcess } from "./upstream-process.js";

/** An upstream MCP server: a command the gateway starts (stdio), or a Streamable HTTP endpoint. */
export type UpstreamSpec =
  | { readonly type: "command"; readonly name: string; readonly command: string; readonly args: readonly string[] }
  | { readonly type: "url"; readonly name: string; readonly url: string };

const UPSTREAM_NAME = /^[A-Za-z0-9_-]{1,32}$/;

/** Raised for an upstream the gateway cannot use as given; the message says what to change. */
export class McpGatewayError extends Error {
  readonly code: "invalid_upstream" | "upstream_unavailable" | "invalid_options";
  constructor(code: McpGatewayError["code"], message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * `NAME=URL` or `NAME=command arg…` (split on spaces, no shell): what `--upstream` takes. An `http://` or
 * `https://` value is a Streamable HTTP endpoint; anything else a command.
 */
export function parseUpstream(text: string): UpstreamSpec {
  const equals = text.indexOf("=");
  const name = text.slice(0, equals);
  const value = text.slice(equals + 1).trim();
  if (equals === -1 || !UPSTREAM_NAME.test(name) || value === "") {
    throw new McpGatewayError(
      "invalid_upstream",
      `Expected an upstream as NAME=URL or NAME=command (NAME of letters, digits, _ or -), got ${JSON.stringify(text)}`,
    );
  }
  if (/^https?:\/\//.test(value)) {
    if (!URL.canParse(value)) throw new McpGatewayError("invalid_upstream", `Upstream ${name}: ${value} is no URL`);
    return { type: "url", name, url: value };
  }
  const [command = "", ...args] = value.split(/\s+/);
  return { type: "command", name, command, args };
}

/** One connected upstream of one gateway session. */
export interface Upstream {
  readonly spec: UpstreamSpec;
  readonly client: Client;
  /** The child's process id for a command upstream. */
  readonly pid: number | undefined;
  close(): Promise<void>;
}

export interface ConnectOptions {
  readonly maxMessageChars: number;
  readonly timeoutMs: number;
  readonly onStderr?: (name: string, line: string) => void;
  readonly signal?: AbortSignal;
}

/** Starts or reaches an upstream and completes MCP's initialize handshake with it, within `timeoutMs`. */
export async function connectUpstream(spec: UpstreamSpec, options: ConnectOptions): Promise<Upstream> {
  const client = new Client({ name: "isohook-mcp-gateway", version: "1" }, { capabilities: {} });
  let transport: UpstreamProcess | StreamableHTTPClientTransport;
  if (spec.type === "command") {
    const onStderr = options.onStderr;
    transport = new UpstreamProcess(spec.command, spec.args, {
      maxMessageChars: options.maxMessageChars,
      ...(onStderr === undefined ? {} : { onStderr: (line: string) => onStderr(spec.name, line) }),
    });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(spec.url));
  }
  try {
    await client.connect(transport, {
      timeout: options.timeoutMs,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } catch (error) {
    await client.close().catch(() => undefined);
    const reason = error instanceof Error ? error.message : String(error);
    throw new McpGatewayError("upstream_unavailable", `Upstream ${spec.name} did not start an MCP session: ${reason}`);
  }
  return {
    spec,
    client,
    pid: transport instanceof UpstreamProcess ? transport.pid : undefined,
    close: () => client.close(),
  };
}
