/**
 * What the MCP gateway adds to one `tools/call`: the SDK's client calls server-everything's `echo` directly
 * (stdio) and through `isohook mcp --tenant` (stdio to the gateway, stdio to its upstream), with one tenant
 * hook deciding every call in the process sandbox (`tool.call`, default limits), and through a gateway whose
 * tenant has no `tool.call` hook (what the hops and the MCP SDK cost without a sandbox crossing). Calls
 * alternate between the paths one by one, so all see the same machine load; prints p50/p99 of each and of
 * the difference to direct. Then calls/s with 16 calls in flight, each path alone for the same time.
 *
 *   npm run bench:mcp            # or: node --no-node-snapshot --import tsx scripts/bench-mcp.ts [calls] [in flight]
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const CALLS = Number(process.argv[2] ?? 2_000);
const IN_FLIGHT = Number(process.argv[3] ?? 16);
const THROUGHPUT_MS = 5_000;
const REPO = fileURLToPath(new URL("..", import.meta.url));
const EVERYTHING = ["node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"];
const NO_CALL_HOOK = `import { defineHooks } from "isohook/hook-sdk";
export default defineHooks({ toolsPrepare() { return undefined; } });
`;
const HOOK = `import { defineHooks } from "isohook/hook-sdk";
export default defineHooks({
  toolCall(event) {
    return event.call.args.message === "forbidden" ? { type: "block", reason: "not that" } : undefined;
  },
});
`;

async function connect(args: string[]): Promise<Client> {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StdioClientTransport({ command: "node", args, cwd: REPO, stderr: "ignore" }));
  return client;
}

async function call(client: Client, i: number): Promise<number> {
  const started = performance.now();
  const result = await client.callTool({ name: "echo", arguments: { message: `m${i}` } });
  const took = performance.now() - started;
  if (result.isError === true) throw new Error(`echo failed: ${JSON.stringify(result)}`);
  return took;
}

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};
const ms = (value: number) => `${value.toFixed(3)} ms`;

async function callsPerSecond(client: Client): Promise<number> {
  let done = 0;
  const until = performance.now() + THROUGHPUT_MS;
  const worker = async () => {
    while (performance.now() < until) await call(client, done++);
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return done / ((performance.now() - started) / 1_000);
}

const dir = await mkdtemp(join(tmpdir(), "isohook-bench-mcp-"));
const clients: Client[] = [];
try {
  await writeFile(join(dir, "hook.ts"), HOOK);
  await writeFile(join(dir, "no-call-hook.ts"), NO_CALL_HOOK);
  const gatewayArgs = ["--no-node-snapshot", "--import", "tsx", "src/cli/main.ts", "mcp", "--tenant", "bench"];
  const through = (hook: string) => connect([...gatewayArgs, "--hook", join(dir, hook), "--", "node", ...EVERYTHING]);
  const [direct, bare, gateway] = await Promise.all([
    connect(EVERYTHING),
    through("no-call-hook.ts"),
    through("hook.ts"),
  ]);
  clients.push(direct, bare, gateway);
  const paths = { "no hook": bare, "one hook": gateway };
  for (let i = 0; i < 200; i++) for (const client of clients) await call(client, i);
  const times: Record<string, number[]> = {};
  const record = (name: string, value: number) => {
    times[name] = [...(times[name] ?? []), value];
  };
  for (let i = 0; i < CALLS; i++) {
    const a = await call(direct, i);
    record("direct", a);
    for (const [name, client] of Object.entries(paths)) {
      const b = await call(client, i);
      record(name, b);
      record(`${name}, added`, b - a);
    }
  }
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}; ${CALLS} calls each, alternating`,
  );
  for (const [name, values] of Object.entries(times))
    console.log(`${name.padEnd(16)} p50 ${ms(percentile(values, 50))}  p99 ${ms(percentile(values, 99))}`);
  const added = percentile(times["one hook, added"] ?? [], 50);
  console.log(`added p50 with one hook ${ms(added)}: ${added <= 1 ? "meets" : "misses"} the 1 ms target`);
  const directRate = await callsPerSecond(direct);
  const gatewayRate = await callsPerSecond(gateway);
  console.log(
    `calls/s with ${IN_FLIGHT} in flight: direct ${directRate.toFixed(0)}, through the gateway (one hook) ${gatewayRate.toFixed(0)} (${(gatewayRate / directRate).toFixed(2)}×)`,
  );
} finally {
  await Promise.all(clients.map((c) => c.close()));
  await rm(dir, { recursive: true, force: true });
}
