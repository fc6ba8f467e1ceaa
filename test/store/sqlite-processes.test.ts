import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TenantId } from "../../src/protocol/index.js";
import { SqliteBundleStore } from "../../src/store/index.js";
import { fakeBundle } from "./helpers/bundles.js";
import { runStoreChild, startStoreChild } from "./helpers/files.js";

const acme = "acme" as TenantId;
let dir: string;
let path: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "isohook-procs-"));
  path = join(dir, "store.db");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function snapshot() {
  const store = await SqliteBundleStore.open(path);
  try {
    return {
      tenants: await store.tenants(),
      versions: await store.versions(acme),
      audit: await store.audit({ limit: 10_000 }),
      active: (await store.active(acme))?.version,
    };
  } finally {
    await store.close();
  }
}

describe("SqliteBundleStore across processes", () => {
  it.each([
    ["acme", "activation"],
    ["globex", "bundle"],
  ] as const)(
    "leaves the previous state when an upload for %s is killed after its %s write",
    async (tenant, crashAt) => {
      const seeded = await SqliteBundleStore.open(path);
      await seeded.upload({ tenantId: acme, ...fakeBundle("v1"), by: "ops", activate: true });
      await seeded.close();
      const before = await snapshot();
      const child = await runStoreChild({
        op: "upload",
        path,
        tenantId: tenant,
        labels: ["killed"],
        activate: true,
        crashAt,
      });
      expect(child.signal).toBe("SIGKILL");
      expect(child.lines).toEqual([]);
      expect(await snapshot()).toEqual(before);
      const store = await SqliteBundleStore.open(path);
      expect(await store.bundle(fakeBundle("killed").manifest.hash)).toBeUndefined();
      expect((await store.upload({ tenantId: acme, ...fakeBundle("next"), by: "ops" })).version.version).toBe(2);
      await store.close();
    },
  );

  it("gives concurrent uploads from two processes distinct versions and loses none", async () => {
    const labels = (who: string) => Array.from({ length: 20 }, (_, i) => `${who}-${i}`);
    const children = ["a", "b"].map((who) =>
      startStoreChild({ op: "upload", path, tenantId: "acme", labels: labels(who), barrier: true }),
    );
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.go();
    const [a, b] = await Promise.all(children.map((c) => c.done));
    if (!a || !b) throw new Error("two children expected");
    expect([a.code, b.code, a.stderr, b.stderr]).toEqual([0, 0, "", ""]);
    const got = [...a.lines, ...b.lines] as { label: string; version: number }[];
    expect(got.map((r) => r.version).sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const { versions, audit } = await snapshot();
    expect(versions.map((v) => v.version)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    for (const { label, version } of got) {
      expect(versions[version - 1]?.hash).toBe(fakeBundle(label).manifest.hash);
    }
    expect(audit.filter((e) => e.type === "upload")).toHaveLength(40);
  });

  it("picks up another process's activation and rollback within the refresh interval, and earlier answers keep their version", async () => {
    let now = 0;
    const store = await SqliteBundleStore.open(path, { refreshMs: 500, now: () => now });
    await store.upload({ tenantId: acme, ...fakeBundle("v1"), by: "ops", activate: true });
    await store.upload({ tenantId: acme, ...fakeBundle("v2"), by: "ops" });
    const startedRun = await store.active(acme);
    expect(startedRun?.version).toBe(1);

    const activated = await runStoreChild({ op: "activate", path, tenantId: "acme", version: 2 });
    expect(activated.code).toBe(0);
    now += 499;
    expect((await store.active(acme))?.version).toBe(1);
    now += 1;
    const next = await store.active(acme);
    expect(next?.version).toBe(2);
    expect(next?.code).toBe(fakeBundle("v2").code);
    expect(startedRun?.version).toBe(1);
    expect(startedRun?.code).toBe(fakeBundle("v1").code);

    expect((await runStoreChild({ op: "rollback", path, tenantId: "acme" })).code).toBe(0);
    now += 500;
    expect((await store.active(acme))?.version).toBe(1);
    await store.close();
  });
});
