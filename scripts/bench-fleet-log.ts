/**
 * The decision log at fleet volume: `--hosts` processes (default 4) each run `tool.call` through the real
 * dispatcher and decision log at 100 % (every call of every tenant recorded) into one PostgreSQL database
 * for `--seconds`, as fast as they can; the sandbox is a canned reply, so the log, not the hooks, is what
 * is measured. The log writes in batches of 500 rows, one multi-row INSERT each. Printed: records written
 * per second by the fleet (rows in the table over the time from the first call to the last flush), each
 * host's, and the drops (none expected: the buffer is big enough).
 *   node --no-node-snapshot --import tsx scripts/bench-fleet-log.ts [--hosts 4] [--seconds 10]
 */
import { fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { DecisionLog } from "../src/decisionlog/index.js";
import { createDispatcher } from "../src/dispatch/index.js";
import { BundleHash, type HookExecutor, RunId, TenantId } from "../src/protocol/index.js";
import { PostgresBundleStore } from "../src/store/index.js";

const BASE = process.env.ISOHOOK_BENCH_PG ?? "postgres://root@127.0.0.1:5432/test";
const { values } = parseArgs({
  options: { hosts: { type: "string" }, seconds: { type: "string" }, child: { type: "string" } },
});

interface ChildResult {
  readonly host: string;
  readonly calls: number;
  readonly recorded: number;
  readonly written: number;
  readonly dropped: number;
  readonly startedAt: number;
  readonly flushedAt: number;
}

if (values.child !== undefined) {
  const { url, host, seconds } = JSON.parse(values.child) as { url: string; host: string; seconds: number };
  process.send?.({ result: await child(url, host, seconds) });
  process.disconnect?.();
} else {
  const hosts = Number(values.hosts ?? 4);
  const seconds = Number(values.seconds ?? 10);
  const database = `fleetlog_${randomBytes(4).toString("hex")}`;
  await sql(BASE, `CREATE DATABASE ${database}`);
  const url = new URL(BASE);
  url.pathname = `/${database}`;
  url.searchParams.set("schema", "isohook");
  try {
    await (await PostgresBundleStore.open(url.toString())).close();
    const script = fileURLToPath(import.meta.url);
    const results = await Promise.all(
      Array.from({ length: hosts }, (_, i) => {
        const arg = JSON.stringify({ url: url.toString(), host: `host-${i + 1}`, seconds });
        const proc = fork(script, ["--child", arg], { execArgv: ["--no-node-snapshot", "--import", "tsx"] });
        return new Promise<ChildResult>((resolve, reject) => {
          proc.on("message", (m: { result: ChildResult }) => resolve(m.result));
          proc.on("exit", (code) => reject(new Error(`host exited ${code}`)));
        });
      }),
    );
    const rows = Number((await sql(url.toString(), "SELECT count(*)::int AS n FROM isohook.decisions"))[0]?.n);
    const from = Math.min(...results.map((r) => r.startedAt));
    const to = Math.max(...results.map((r) => r.flushedAt));
    const perSecond = Math.round(rows / ((to - from) / 1000));
    const load = loadavg()
      .map((l) => l.toFixed(1))
      .join(" ");
    console.log(
      `decision log at fleet volume: ${hosts} hosts, 100 % logged, ${seconds} s of calls (load average ${load})`,
    );
    console.log(
      `  ${rows} records in PostgreSQL in ${((to - from) / 1000).toFixed(1)} s: ${perSecond} records/s (target 20000)`,
    );
    for (const r of results) {
      const s = (r.flushedAt - r.startedAt) / 1000;
      console.log(
        `  ${r.host}: ${r.calls} calls, ${r.written} written (${Math.round(r.written / s)}/s), dropped ${r.dropped}`,
      );
    }
  } finally {
    await sql(BASE, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  }
}

async function child(url: string, host: string, seconds: number): Promise<ChildResult> {
  const store = await PostgresBundleStore.open(url);
  const log = await DecisionLog.open(store, { all: { sample: 1 }, bufferSize: 1_000_000, bufferChars: 2 ** 30 });
  const canned: HookExecutor = {
    mode: "inline",
    execute: async () => ({
      type: "replied",
      reply: '{"kind":"returned","result":null,"logs":[]}',
      cpuMs: 0.01,
      runMs: 0.01,
    }),
    describe: async () => {
      throw new Error("unused");
    },
    close: async () => {},
  };
  const dispatcher = createDispatcher({
    executor: canned,
    decisionLog: log,
    budgets: { turnMs: 3_600_000, runMs: 86_400_000 },
  });
  const tenantId = TenantId.parse("acme");
  const hash = BundleHash.parse(`sha256-${"b".repeat(64)}`);
  const bundle = {
    tenantId,
    version: 1,
    code: "",
    manifest: { hash, bytes: 0, hookPoints: ["tool.call" as const], sdkVersion: "1", entry: "bench" },
    config: {},
  };
  const startedAt = Date.now();
  const end = startedAt + seconds * 1000;
  let calls = 0;
  for (let r = 0; Date.now() < end; r++) {
    const run = dispatcher.openRun({ tenantId, runId: RunId.parse(`run_${host}_${r}`), bundle });
    run.beginTurn(0);
    for (let i = 0; i < 100; i++) {
      await run.dispatch("tool.call", {
        call: { id: `c${i}`, name: "shell", args: { command: `ls /tmp/${i}` } },
        batch: { index: 0, size: 1 },
      });
      calls++;
    }
  }
  await dispatcher.close();
  await log.close();
  const flushedAt = Date.now();
  const s = log.stats();
  await store.close();
  return {
    host,
    calls,
    recorded: s.recorded,
    written: s.written,
    dropped: s.droppedFull + s.droppedFailed,
    startedAt,
    flushedAt,
  };
}

async function sql(connectionString: string, text: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}
