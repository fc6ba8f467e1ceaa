/**
 * What the MCP gateway adds to one `tools/call`: the SDK's client calls server-everything's `echo` directly
 * (stdio) and through `isohook mcp --tenant` (stdio to the gateway, stdio to its upstream), with one tenant
 * hook deciding every call in the process sandbox (`tool.call`, default limits). Calls alternate between the
 * two paths one by one, so both see the same machine load; prints p50/p99 of each and of the difference.
 * Then calls/s with 16 calls in flight, each path alone for the same time.
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
let direct: Client | undefined;
let gateway: Client | undefined;
try {
  await writeFile(join(dir, "index.ts"), HOOK);
  direct = await connect(EVERYTHING);
  const gatewayArgs = ["--no-node-snapshot", "--import", "tsx", "src/cli/main.ts", "mcp", "--tenant", "bench"];
  gateway = await connect([...gatewayArgs, "--hook", dir, "--", "node", ...EVERYTHING]);
  for (let i = 0; i < 200; i++) await Promise.all([call(direct, i), call(gateway, i)]);
  const times = { direct: [] as number[], gateway: [] as number[], added: [] as number[] };
  for (let i = 0; i < CALLS; i++) {
    const a = await call(direct, i);
    const b = await call(gateway, i);
    times.direct.push(a);
    times.gateway.push(b);
    times.added.push(b - a);
  }
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}; ${CALLS} calls each, alternating`,
  );
  for (const [name, values] of Object.entries(times))
    console.log(`${name.padEnd(8)} p50 ${ms(percentile(values, 50))}  p99 ${ms(percentile(values, 99))}`);
  const added = percentile(times.added, 50);
  console.log(`added p50 ${ms(added)}: ${added <= 1 ? "meets" : "misses"} the 1 ms target`);
  const directRate = await callsPerSecond(direct);
  const gatewayRate = await callsPerSecond(gateway);
  console.log(
    `calls/s with ${IN_FLIGHT} in flight: direct ${directRate.toFixed(0)}, through the gateway ${gatewayRate.toFixed(0)} (${(gatewayRate / directRate).toFixed(2)}×)`,
  );
} finally {
  await direct?.close();
  await gateway?.close();
  await rm(dir, { recursive: true, force: true });
}
