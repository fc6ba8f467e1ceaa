/**
 * Store figures: what serving a tenant's active bundle costs (cached, and when another process changed
 * the store), what an upload and an activation cost (one fsync'd WAL transaction each), and opening a
 * store (with its integrity check). Run: `node --import tsx scripts/bench-store.ts`.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BundleHash, SDK_VERSION, TenantId } from "../src/protocol/index.js";
import { SqliteBundleStore } from "../src/store/index.js";

const dir = mkdtempSync(join(tmpdir(), "isohook-bench-store-"));
const path = join(dir, "store.db");
const tenants = Array.from({ length: 100 }, (_, i) => TenantId.parse(`tenant-${i}`));

function bundle(label: string, kb: number) {
  const code = `var __isohook_bundle = { default: {} }; /* ${label} ${"x".repeat(kb * 1024)} */`;
  const hash = BundleHash.parse(`sha256-${createHash("sha256").update(code).digest("hex")}`);
  const bytes = Buffer.byteLength(code);
  return { code, manifest: { hash, bytes, hookPoints: ["tool.call" as const], sdkVersion: SDK_VERSION, entry: label } };
}

async function time(label: string, n: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  const start = performance.now();
  for (let i = 0; i < n; i++) await fn(i);
  const us = ((performance.now() - start) * 1000) / n;
  console.log(`${label.padEnd(58)} ${us < 1000 ? `${us.toFixed(1)} µs` : `${(us / 1000).toFixed(2)} ms`}`);
}

try {
  const writer = await SqliteBundleStore.open(path);
  await time("upload 50 KB bundle + activate (new version)", 200, (i) =>
    writer.upload({ tenantId: tenants[i % 100] as TenantId, ...bundle(`b${i}`, 50), by: "bench", activate: true }),
  );
  await time("activate (switch between two versions)", 200, (i) =>
    writer.activate({ tenantId: tenants[0] as TenantId, version: (i % 2) + 1, by: "bench" }),
  );
  const reader = await SqliteBundleStore.open(path);
  await time("active(): cached, within refreshMs", 100_000, (i) => reader.active(tenants[i % 100] as TenantId));
  const checking = await SqliteBundleStore.open(path, { refreshMs: 0 });
  await time("active(): data_version check every call, no change", 100_000, (i) =>
    checking.active(tenants[i % 100] as TenantId),
  );
  await time("activate in another connection, then active() re-reads", 200, async (i) => {
    await writer.activate({ tenantId: tenants[0] as TenantId, version: (i % 2) + 1, by: "bench" });
    return checking.active(tenants[0] as TenantId);
  });
  await time("open an existing 10 MB store (quick_check included)", 20, async () =>
    (await SqliteBundleStore.open(path)).close(),
  );
  await time("open without the integrity check", 20, async () =>
    (await SqliteBundleStore.open(path, { integrityCheck: false })).close(),
  );
  for (const store of [writer, reader, checking]) await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
