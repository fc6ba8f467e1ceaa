import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TenantId } from "../../src/protocol/index.js";
import { PostgresBundleStore, StoreError, type UploadStep } from "../../src/store/index.js";
import { fakeBundle } from "./helpers/bundles.js";
import { STORE_WATCH, startStoreChild } from "./helpers/files.js";
import { dropSchema, freshSchema, pgQuery, pgUrl, postgresAvailable } from "./helpers/postgres.js";

const acme = "acme" as TenantId;
const available = await postgresAvailable();
let schema: string;
let url: string;

beforeEach(() => {
  schema = freshSchema();
  url = pgUrl(schema);
});
afterEach(() => dropSchema(schema));

async function snapshot() {
  const store = await PostgresBundleStore.open(url);
  try {
    return {
      tenants: await store.tenants(),
      versions: await store.versions(acme).catch((e: unknown) => (e instanceof StoreError ? e.code : e)),
      audit: await store.audit({ limit: 10_000 }),
      active: (await store.active(acme))?.version,
    };
  } finally {
    await store.close();
  }
}

describe.skipIf(!available)("PostgresBundleStore across processes", () => {
  it("gives concurrent uploads from four processes distinct, gap-free versions and loses none", async () => {
    (await PostgresBundleStore.open(url)).close();
    const labels = (who: string) => Array.from({ length: 15 }, (_, i) => `${who}-${i}`);
    const children = ["a", "b", "c", "d"].map((who) =>
      startStoreChild({ op: "upload", path: url, tenantId: "acme", labels: labels(who), barrier: true }),
    );
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.go();
    const results = await Promise.all(children.map((c) => c.done));
    expect(results.map((r) => [r.code, r.stderr])).toEqual(results.map(() => [0, ""]));
    const got = results.flatMap((r) => r.lines) as { label: string; version: number }[];
    const all = Array.from({ length: 60 }, (_, i) => i + 1);
    expect(got.map((r) => r.version).sort((x, y) => x - y)).toEqual(all);
    const { versions, audit } = await snapshot();
    if (!Array.isArray(versions)) throw new Error(`versions: ${String(versions)}`);
    expect(versions.map((v) => v.version)).toEqual(all);
    for (const { label, version } of got) expect(versions[version - 1]?.hash).toBe(fakeBundle(label).manifest.hash);
    expect(audit.filter((e) => e.type === "upload")).toHaveLength(60);
  });

  it.each(["tenant", "bundle", "version", "activation"] as const)(
    "leaves the previous state when the upload's connection is killed after its %s write",
    async (step: UploadStep) => {
      const seeded = await PostgresBundleStore.open(url);
      await seeded.upload({ tenantId: acme, ...fakeBundle("v1"), by: "ops", activate: true });
      await seeded.close();
      const before = await snapshot();
      const app = `isohook-kill-${schema}`;
      let killed = 0;
      const store = await PostgresBundleStore.open(pgUrl(schema, { application_name: app }), {
        onUploadStep: async (at) => {
          if (at !== step || killed > 0) return;
          const rows = await pgQuery<{ killed: boolean }>(
            "SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle in transaction'",
            [app],
          );
          killed = rows.filter((r) => r.killed).length;
        },
      });
      const failed = await store.upload({ tenantId: acme, ...fakeBundle("killed"), by: "ops", activate: true }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(killed).toBe(1);
      expect(failed).toBeInstanceOf(StoreError);
      expect((failed as StoreError).code).toBe("unavailable");
      expect(await snapshot()).toEqual(before);
      expect(await store.bundle(fakeBundle("killed").manifest.hash)).toBeUndefined();
      // The pool replaced the dead connection: the next upload gets the next version.
      expect((await store.upload({ tenantId: acme, ...fakeBundle("next"), by: "ops" })).version.version).toBe(2);
      await store.close();
    },
  );

  it("shows another host's activations and rollbacks in a median under 100 ms through LISTEN/NOTIFY, not polling", async () => {
    const writer = await PostgresBundleStore.open(url);
    await writer.upload({ tenantId: acme, ...fakeBundle("v1"), by: "ops", activate: true });
    await writer.upload({ tenantId: acme, ...fakeBundle("v2"), by: "ops" });
    const seen: { version: number; at: number }[] = [];
    let onSeen: () => void = () => {};
    // The watching host would poll only every 60 s: a quick pick-up is the notification.
    const watch = { location: url, tenantId: "acme", changes: 10, pollMs: 2, refreshMs: 60_000 };
    const host = startStoreChild(
      watch,
      (line) => {
        seen.push(line as { version: number; at: number });
        onSeen();
      },
      STORE_WATCH,
    );
    await host.ready;
    const latencies: number[] = [];
    for (let i = 0; i < 10; i++) {
      const next = new Promise<void>((resolve) => {
        onSeen = resolve;
      });
      if (i % 2 === 0) await writer.activate({ tenantId: acme, version: 2, by: "ops" });
      else await writer.rollback({ tenantId: acme, by: "ops" });
      // Timed from the change's return (its commit is just before): the writer's own transaction is not pick-up.
      const start = performance.timeOrigin + performance.now();
      await next;
      latencies.push((seen.at(-1)?.at ?? Number.NaN) - start);
    }
    const result = await host.done;
    expect([result.code, result.stderr]).toEqual([0, ""]);
    expect(seen.map((s) => s.version)).toEqual([2, 1, 2, 1, 2, 1, 2, 1, 2, 1]);
    // The median is the mechanism (notification, one re-read); a single sample on a starved machine is the
    // scheduler, so the bound on each is the one that rules out polling. p99 figures: scripts/bench-store.ts.
    latencies.sort((a, b) => a - b);
    expect(latencies[5]).toBeLessThan(100);
    expect(latencies[9]).toBeLessThan(1_000);
    await writer.close();
  });
});
