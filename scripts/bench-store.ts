/**
 * Store figures, SQLite and PostgreSQL side by side: serving a tenant's active bundle from the cache, an
 * upload with activation (one transaction each), an activation, and pick-up latency across two
 * processes (one activates, a second host calls `active()` every millisecond and notes when it sees the
 * change; the commit lies between the activation's call and its return, so both are reported; SQLite checks `data_version` every refreshMs =
 * 500 ms, PostgreSQL is notified by LISTEN/NOTIFY).
 * PostgreSQL: `ISOHOOK_BENCH_PG`, default postgres://root@127.0.0.1:5432/test, in a scratch schema
 * dropped afterwards. Run: `node --import tsx scripts/bench-store.ts`.
 */
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { BundleHash, SDK_VERSION, TenantId } from "../src/protocol/index.js";
import { type BundleStore, openStore } from "../src/store/index.js";

const PG = process.env.ISOHOOK_BENCH_PG ?? "postgres://root@127.0.0.1:5432/test";
const WATCH = fileURLToPath(new URL("./store-watch.ts", import.meta.url));
const tenants = Array.from({ length: 100 }, (_, i) => TenantId.parse(`tenant-${i}`));
const acme = TenantId.parse("tenant-0");

function bundle(label: string, kb: number) {
  const code = `var __isohook_bundle = { default: {} }; /* ${label} ${"x".repeat(kb * 1024)} */`;
  const hash = BundleHash.parse(`sha256-${createHash("sha256").update(code).digest("hex")}`);
  const bytes = Buffer.byteLength(code);
  return { code, manifest: { hash, bytes, hookPoints: ["tool.call" as const], sdkVersion: SDK_VERSION, entry: label } };
}

/** Mean time per call, in ms. */
async function time(n: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < n; i++) await fn(i);
  return (performance.now() - start) / n;
}

function percentile(samples: readonly PickUp[], key: keyof PickUp, p: number): number | undefined {
  const sorted = samples.map((s) => s[key]).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

/** Activates 1 and 2 in turn; a second process reports when its `active()` shows each. Latencies in ms. */
/**
 * The commit lies between the start of `activate()` and its return, so the true pick-up latency lies
 * between `fromReturn` and `fromCall`.
 */
async function pickUp(location: string, store: BundleStore, samples: number): Promise<PickUp[]> {
  const watch = { location, tenantId: acme, changes: samples, pollMs: 1 };
  const child = spawn(process.execPath, ["--import", "tsx", WATCH, JSON.stringify(watch)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  await lines.next();
  const latencies: PickUp[] = [];
  for (let i = 0; i < samples; i++) {
    // A random pause of up to one refresh interval, so activations do not fall in step with SQLite's checks.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 500));
    const start = performance.timeOrigin + performance.now();
    await store.activate({ tenantId: acme, version: (i % 2) + 1, by: "bench" });
    const committed = performance.timeOrigin + performance.now();
    const seen = (JSON.parse(String((await lines.next()).value)) as { at: number }).at;
    latencies.push({ fromCall: seen - start, fromReturn: seen - committed });
  }
  await new Promise((resolve) => child.once("close", resolve));
  return latencies;
}

interface PickUp {
  readonly fromCall: number;
  readonly fromReturn: number;
}

interface Figures {
  readonly cached: number;
  readonly upload: number;
  readonly activate: number;
  readonly pickUp: PickUp[];
}

async function measure(location: string): Promise<Figures> {
  const writer = await openStore(location);
  const reader = await openStore(location);
  try {
    const upload = await time(200, (i) =>
      writer.upload({ tenantId: tenants[i % 100] as TenantId, ...bundle(`b${i}`, 50), by: "bench", activate: true }),
    );
    const activate = await time(200, (i) => writer.activate({ tenantId: acme, version: (i % 2) + 1, by: "bench" }));
    for (const tenant of tenants) await reader.active(tenant);
    const cached = await time(100_000, (i) => reader.active(tenants[i % 100] as TenantId));
    return { cached, upload, activate, pickUp: await pickUp(location, writer, 100) };
  } finally {
    await reader.close();
    await writer.close();
  }
}

const show = (ms: number | undefined) =>
  ms === undefined ? "—" : Math.abs(ms) < 1 ? `${(ms * 1000).toFixed(1)} µs` : `${ms.toFixed(ms < 10 ? 2 : 0)} ms`;

const dir = mkdtempSync(join(tmpdir(), "isohook-bench-store-"));
const schema = `bench_${randomBytes(4).toString("hex")}`;
const pgLocation = `${PG}${PG.includes("?") ? "&" : "?"}schema=${schema}`;
try {
  const sqlite = await measure(join(dir, "store.db"));
  let postgres: Figures | undefined;
  let skipped = "";
  try {
    postgres = await measure(pgLocation);
  } catch (error) {
    skipped = error instanceof Error ? error.message : String(error);
  }
  const rows: [string, (f: Figures) => number | undefined][] = [
    ["active(): cached, no change", (f) => f.cached],
    ["upload 50 KB bundle + activate", (f) => f.upload],
    ["activate (switch between two versions)", (f) => f.activate],
    ["pick-up, p50 from activate() called", (f) => percentile(f.pickUp, "fromCall", 0.5)],
    ["pick-up, p99 from activate() called", (f) => percentile(f.pickUp, "fromCall", 0.99)],
    ["pick-up, p50 from activate() returned", (f) => percentile(f.pickUp, "fromReturn", 0.5)],
    ["pick-up, p99 from activate() returned", (f) => percentile(f.pickUp, "fromReturn", 0.99)],
  ];
  console.log(`${"".padEnd(42)} ${"SQLite".padStart(12)} ${"PostgreSQL".padStart(12)}`);
  for (const [label, pick] of rows) {
    console.log(
      `${label.padEnd(42)} ${show(pick(sqlite)).padStart(12)} ${show(postgres && pick(postgres)).padStart(12)}`,
    );
  }
  if (skipped) console.log(`PostgreSQL skipped: ${skipped}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
  const client = new pg.Client(PG);
  await client
    .connect()
    .then(() => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))
    .catch(() => undefined);
  await client.end().catch(() => undefined);
}
