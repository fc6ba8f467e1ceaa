import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../../sandbox/supervisor/index.js";
import { listenMcpHttp, type McpHttpGateway, serveMcpStdio } from "../../../src/adapters/mcp/index.js";
import { buildBundle } from "../../../src/bundler/index.js";
import { type HookExecutor, TenantId } from "../../../src/protocol/index.js";
import { createHookRuntime, type HookRuntime, type RunEvent } from "../../../src/runtime/index.js";
import { MemoryBundleStore } from "../../../src/store/index.js";
import { connectHttp, POLICY, textOf } from "./gateway-fixture.js";

/**
 * The gateway as a library (`listenMcpHttp` with a platform's token callback) under attack from every side:
 * an upstream that hangs, crashes, writes garbage, lies about its output schema and floods; a client that
 * goes away mid-call; requests without a valid token; and a hostile tenant beside a well-behaved one.
 */

const TOKENS: Record<string, string> = { "acme-token-0123456789": "acme", "mallory-token-0123456789": "mallory" };
const CALL_TIMEOUT_MS = 2_000;
let dir: string;
let executor: HookExecutor;
let runtime: HookRuntime;
let gateway: McpHttpGateway;
const events: RunEvent[] = [];
const asked: string[] = [];

const pids = async () => (await readdir(dir)).filter((f) => f.startsWith("pid-")).map((f) => Number(f.slice(4)));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const liar = () => [
  { type: "command", name: "liar", command: "node", args: ["test/fixtures/mcp/lying-upstream.mjs", dir] } as const,
];
const connect = (tenant: "acme" | "mallory") => connectHttp(gateway.url, `${tenant}-token-0123456789`);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-mcp-hostile-"));
  executor = await createHookExecutor({ workers: 1, spareWorker: false, limits: { timeoutMs: 100 } });
  const store = new MemoryBundleStore();
  for (const [tenant, entry] of [
    ["acme", POLICY],
    ["mallory", "test/fixtures/mcp/hostile"],
  ] as const) {
    const built = await buildBundle(entry, { executor });
    await store.upload({ tenantId: TenantId.parse(tenant), ...built, config: null, by: "test", activate: true });
  }
  runtime = await createHookRuntime({ executor, store, decisionLog: false });
  gateway = await listenMcpHttp(
    {
      runtime,
      upstreams: [
        { type: "command", name: "liar", command: "node", args: ["test/fixtures/mcp/lying-upstream.mjs", dir] },
      ],
      callTimeoutMs: CALL_TIMEOUT_MS,
      maxMessageChars: 1_000_000,
      onEvent: (event) => events.push(event),
    },
    {
      host: "127.0.0.1",
      port: 0,
      authenticate: (token) => {
        asked.push(token);
        return TOKENS[token];
      },
    },
  );
}, 120_000);
afterAll(async () => {
  await gateway?.close();
  await runtime?.close();
  await executor?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the MCP gateway under attack", { timeout: 60_000 }, () => {
  it("answers 401 to a missing or unknown token: no run opens, no upstream starts", async () => {
    const before = { events: events.length, pids: (await pids()).length };
    for (const authorization of [undefined, "Bearer guessed-token-0000000000"]) {
      const response = await fetch(gateway.url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }),
      });
      expect(response.status).toBe(401);
    }
    expect(asked).toEqual(["guessed-token-0000000000"]);
    expect({ events: events.length, pids: (await pids()).length }).toEqual(before);
  });

  it("refuses sessions past its cap with 503, and takes new ones once a session closes", async () => {
    const capped = await listenMcpHttp(
      { runtime, upstreams: liar() },
      { host: "127.0.0.1", port: 0, maxSessions: 1, authenticate: (token) => TOKENS[token] },
    );
    try {
      const first = await connectHttp(capped.url, "acme-token-0123456789");
      await expect(connectHttp(capped.url, "acme-token-0123456789")).rejects.toThrow(/503|open sessions/);
      await leave(first);
      const second = await connectHttp(capped.url, "acme-token-0123456789");
      expect(textOf(await second.callTool({ name: "ok", arguments: {} }))).toBe("fine");
      await leave(second);
    } finally {
      await capped.close();
    }
  });

  it("gives a clear tool error for an upstream that hangs, writes garbage or lies about its output schema", async () => {
    const client = await connect("acme");
    expect(textOf(await client.callTool({ name: "hang", arguments: {} }))).toBe(
      `upstream liar failed: no answer within ${CALL_TIMEOUT_MS} ms`,
    );
    expect(textOf(await client.callTool({ name: "garbage", arguments: {} }))).toBe(
      `upstream liar failed: no answer within ${CALL_TIMEOUT_MS} ms`,
    );
    const lying = await client.callTool({ name: "badshape", arguments: {} });
    expect(lying.isError).toBe(true);
    expect(textOf(lying)).toMatch(
      /^upstream liar failed: .*structured content does not match the tool's output schema/i,
    );
    // The session survives all three.
    expect(textOf(await client.callTool({ name: "ok", arguments: {} }))).toBe("fine");
    await leave(client);
  });

  it("cuts off an upstream that floods, and one that crashes; later sessions get fresh upstreams", async () => {
    for (const tool of ["huge", "crash"]) {
      const client = await connect("acme");
      const failed = await client.callTool({ name: tool, arguments: {} });
      expect(textOf(failed)).toBe("upstream liar failed: it closed the connection (it exited or crashed)");
      expect(textOf(await client.callTool({ name: "ok", arguments: {} }))).toMatch(/^upstream liar failed: /);
      await leave(client);
    }
    const fresh = await connect("acme");
    expect(textOf(await fresh.callTool({ name: "ok", arguments: {} }))).toBe("fine");
    await leave(fresh);
  });

  it("passes a client's cancel on to the upstream, and ends the session and its upstream when the client leaves mid-call", async () => {
    const before = await pids();
    const client = await connect("acme");
    const [pid] = (await pids()).filter((p) => !before.includes(p));
    if (pid === undefined) throw new Error("the session started no upstream");
    const decided = () => events.filter((e) => e.type === "hooks.decided" && e.point === "tool.call").length;
    let seen = decided();
    const controller = new AbortController();
    const pending = client.callTool({ name: "hang", arguments: {} }, undefined, { signal: controller.signal });
    await waitFor(async () => decided() > seen);
    controller.abort();
    await expect(pending).rejects.toThrow();
    const cancelled = join(dir, `cancelled-${pid}`);
    await waitFor(async () => (await readdir(dir)).includes(`cancelled-${pid}`));
    // Upstream request 2 is the call (0 initialize, 1 the listing its signal also covered).
    expect((await readFile(cancelled, "utf8")).trim().split("\n")).toContain("2");
    // Leaves mid-call: the session is ended (DELETE) while a call hangs.
    const sessions = gateway.sessions();
    seen = decided();
    const hanging = client.callTool({ name: "hang", arguments: {} }).catch((error: unknown) => error);
    await waitFor(async () => decided() > seen);
    await leave(client);
    await waitFor(async () => !alive(pid));
    expect(gateway.sessions()).toBe(sessions - 1);
    expect(await hanging).toBeInstanceOf(Error);
  });

  it("ends the run (run.end) and stops the upstream when a stdio client's input ends mid-call", async () => {
    const seen: RunEvent[] = [];
    const input = new PassThrough();
    const output = new PassThrough();
    const gatewayOptions = { runtime, upstreams: liar(), onEvent: (event: RunEvent) => seen.push(event) };
    const { session, closed } = await serveMcpStdio(gatewayOptions, { tenantId: "acme", input, output });
    const pid = session.upstreams[0]?.pid ?? -1;
    const send = (message: object) => input.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    const clientInfo = { name: "raw", version: "1" };
    send({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo } });
    send({ method: "notifications/initialized" });
    send({ id: 2, method: "tools/call", params: { name: "hang", arguments: {} } });
    await waitFor(async () => seen.some((e) => e.type === "hooks.decided" && e.point === "tool.call"));
    expect(alive(pid)).toBe(true);
    input.end();
    await closed;
    await waitFor(async () => seen.some((e) => e.type === "hook.called" && e.record.point === "run.end"));
    await waitFor(async () => !alive(pid));
  });

  it("keeps a hostile tenant's spinning and throwing hooks to its own calls, beside a well-behaved tenant", async () => {
    const [acme, mallory] = await Promise.all([connect("acme"), connect("mallory")]);
    const [spun, ...fine] = await Promise.all([
      mallory.callTool({ name: "ok", arguments: {} }),
      acme.callTool({ name: "ok", arguments: {} }),
      acme.callTool({ name: "ok", arguments: { note: "forbidden" } }),
      acme.callTool({ name: "ok", arguments: {} }),
    ]);
    expect(textOf(spun)).toMatch(/^blocked: (timeout|quarantined)/);
    expect(fine.map(textOf)).toEqual(["fine", "blocked: the word 'forbidden' is not allowed", "fine"]);
    // Its throwing tools.prepare fails open (the listing's default policy): it sees the upstream's tools.
    expect((await mallory.listTools()).tools.map((t) => t.name)).toContain("ok");
    const failures = events.filter(
      (e) =>
        e.type === "hook.called" && e.record.outcome.type === "failed" && e.record.hookId.startsWith("tenant:mallory"),
    );
    expect(failures.length).toBeGreaterThanOrEqual(2);
    await Promise.all([leave(acme), leave(mallory)]);
  });
});

/** Ends the client's session (DELETE), as a client that leaves properly does. */
async function leave(client: Client): Promise<void> {
  await (client.transport as StreamableHTTPClientTransport).terminateSession();
  await client.close();
}

async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}
