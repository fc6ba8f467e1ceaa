import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { TenantId } from "../../protocol/index.js";
import { type McpGatewayOptions, type McpSession, openMcpSession } from "./session.js";
import type { Authenticate } from "./tokens.js";

/** Where and how the Streamable HTTP gateway listens. */
export interface McpHttpOptions {
  readonly host: string;
  /** 0 picks a free port (see `url`). */
  readonly port: number;
  /** The tenant of a bearer token; a request without a token it accepts gets 401. */
  readonly authenticate: Authenticate;
  /** A session with no request for this long is closed (its run ended). Default 600 000 ms. */
  readonly sessionIdleMs?: number;
  /** Open sessions at most (each has its own upstream processes); more get 503. Default 100. */
  readonly maxSessions?: number;
}

export interface McpHttpGateway {
  /** The MCP endpoint, `http://HOST:PORT/mcp`. */
  readonly url: string;
  /** Open sessions. */
  readonly sessions: () => number;
  /** Stops listening and closes every session (each run ends). */
  close(): Promise<void>;
}

interface Entry {
  readonly tenantId: string;
  readonly session: McpSession;
  readonly transport: StreamableHTTPServerTransport;
  timer: NodeJS.Timeout | undefined;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Serves MCP over Streamable HTTP at `/mcp` for many tenants: each request's tenant comes from its bearer
 * token, each `initialize` opens a session (its own run and upstream connections) bound to that tenant,
 * and a request for another tenant's session is answered as if the session did not exist. A request
 * without a valid token gets 401 before its body is read: it never reaches a hook or an upstream.
 */
export async function listenMcpHttp(gateway: McpGatewayOptions, options: McpHttpOptions): Promise<McpHttpGateway> {
  const sessions = new Map<string, Entry>();
  const idleMs = options.sessionIdleMs ?? 600_000;
  const maxSessions = options.maxSessions ?? 100;
  /** Sessions opened and not yet closed, counted from before their upstreams start. */
  let open = 0;
  const maxBodyChars = gateway.maxMessageChars ?? 4_000_000;
  const touch = (entry: Entry) => {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => void entry.transport.close(), idleMs);
    entry.timer.unref();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://gateway");
    if (url.pathname !== "/mcp") return reply(res, 404, "Not found: the MCP endpoint is /mcp");
    const tenantId = await tenantOf(req, options.authenticate);
    if (tenantId === undefined) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="isohook"');
      return reply(res, 401, "Unauthorized: send `Authorization: Bearer <token>` with a token the gateway knows");
    }
    const body = req.method === "POST" ? await readJson(req, maxBodyChars) : undefined;
    if (body instanceof Error) return reply(res, 400, body.message);
    const id = req.headers["mcp-session-id"];
    if (typeof id === "string") {
      const entry = sessions.get(id);
      // Another tenant's session id is answered as an unknown one.
      if (entry === undefined || entry.tenantId !== tenantId) return reply(res, 404, "Session not found");
      touch(entry);
      return entry.transport.handleRequest(req, res, body);
    }
    if (req.method !== "POST" || !isInitializeRequest(body))
      return reply(res, 400, "Bad request: no session; start one with an initialize request");
    if (open >= maxSessions)
      return reply(res, 503, `The gateway has ${maxSessions} open sessions, its most; try again later`);
    let session: McpSession;
    open++;
    try {
      session = await openMcpSession(gateway, { tenantId });
    } catch (error) {
      open--;
      return reply(res, 502, error instanceof Error ? error.message : String(error));
    }
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      open--;
      void session.close();
    };
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sessionId) => {
        const entry: Entry = { tenantId, session, transport, timer: undefined };
        sessions.set(sessionId, entry);
        touch(entry);
      },
    });
    transport.onclose = () => {
      const sessionId = transport.sessionId;
      if (sessionId !== undefined) {
        clearTimeout(sessions.get(sessionId)?.timer);
        sessions.delete(sessionId);
      }
      close();
    };
    await session.server.connect(transport);
    await transport.handleRequest(req, res, body);
    if (transport.sessionId === undefined) close();
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) reply(res, 500, error instanceof Error ? error.message : String(error));
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/mcp`,
    sessions: () => sessions.size,
    async close() {
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await Promise.allSettled([...sessions.values()].map((e) => e.transport.close()));
      await Promise.allSettled([...sessions.values()].map((e) => e.session.close()));
      await closing;
    },
  };
}

async function tenantOf(req: IncomingMessage, authenticate: Authenticate): Promise<string | undefined> {
  const token = BEARER.exec(req.headers.authorization ?? "")?.[1];
  if (token === undefined) return undefined;
  const controller = new AbortController();
  req.once("close", () => controller.abort());
  const tenant = await authenticate(token, controller.signal);
  return tenant !== undefined && TenantId.safeParse(tenant).success ? tenant : undefined;
}

/** The request's JSON body, read up to `max` characters; an Error (400) for too much or not JSON. */
async function readJson(req: IncomingMessage, max: number): Promise<unknown> {
  let text = "";
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > max) return new Error(`Request too large: over ${max} characters`);
  }
  try {
    return JSON.parse(text);
  } catch {
    return new Error("Bad request: the body is not JSON");
  }
}

function reply(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}
