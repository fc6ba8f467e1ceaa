import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TenantId } from "../../src/protocol/index.js";
import type { BundleStore } from "../../src/store/index.js";
import { fakeBundle } from "./helpers/bundles.js";
import { rejection } from "./helpers/rejection.js";
import { storeFactories } from "./helpers/store-factories.js";

const acme = "acme" as TenantId;

let clock = 0;
const tick = () => 1_700_000_000_000 + ++clock * 1000;
const factories = await storeFactories({ clock: tick, maxBundleBytes: 4096 });

describe.each(factories)("BundleStore rollout and shadow contract (%s)", (_name, open) => {
  let store: BundleStore;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    clock = 0;
    ({ store, cleanup } = await open());
    for (const label of ["a1", "a2", "a3"]) {
      await store.upload({ tenantId: acme, ...fakeBundle(label), by: "ops", activate: label === "a1" });
    }
  });
  afterEach(async () => {
    await store.close();
    await cleanup();
  });

  const auditRows = async () =>
    (await store.audit({ tenantId: acme }))
      .filter((e) => e.type !== "upload")
      .map((e) => [e.type, e.version, e.fromVersion, e.detail, e.by]);

  it("starts a rollout, serves it with the active version in one answer, and changes its share", async () => {
    const started = await store.rollout({ tenantId: acme, version: 2, percent: 25, by: "alice" });
    expect(started).toEqual({
      tenantId: "acme",
      version: 2,
      percent: 25,
      activeVersion: 1,
      previous: null,
      activated: false,
      changed: true,
    });
    const served = await store.active(acme);
    expect(served?.version).toBe(1);
    expect(served?.rollout?.percent).toBe(25);
    expect(served?.rollout?.bundle.version).toBe(2);
    expect(served?.rollout?.bundle.manifest.hash).toBe(fakeBundle("a2").manifest.hash);
    expect(served?.rollout?.bundle.code).toBe(fakeBundle("a2").code);
    const changed = await store.rollout({ tenantId: acme, version: 2, percent: 50.5, by: "alice" });
    expect(changed.previous).toEqual({ version: 2, percent: 25 });
    expect((await store.active(acme))?.rollout?.percent).toBe(50.5);
    const same = await store.rollout({ tenantId: acme, version: 2, percent: 50.5, by: "alice" });
    expect(same.changed).toBe(false);
    expect(await auditRows()).toEqual([
      ["activate", 1, null, null, "ops"],
      ["rollout", 2, 1, "25 % of runs", "alice"],
      ["rollout", 2, 1, "50.5 % of runs", "alice"],
    ]);
  });

  it("shows the rollout on the tenant and its versions", async () => {
    await store.rollout({ tenantId: acme, version: 3, percent: 10, by: "alice" });
    const summary = await store.tenant(acme);
    expect(summary?.rollout).toMatchObject({
      version: 3,
      percent: 10,
      by: "alice",
      hash: fakeBundle("a3").manifest.hash,
    });
    expect(summary?.rollout?.since).toBe(new Date(1_700_000_004_000).toISOString());
    expect(summary?.shadow).toBeNull();
    const versions = await store.versions(acme);
    expect(versions.map((v) => [v.version, v.active, v.rolloutPercent, v.shadow])).toEqual([
      [1, true, null, false],
      [2, false, null, false],
      [3, false, 10, false],
    ]);
    expect((await store.version(acme, 3))?.rolloutPercent).toBe(10);
  });

  it("completes a rollout at 100 % as an activation that ends it", async () => {
    await store.rollout({ tenantId: acme, version: 2, percent: 50, by: "alice" });
    const done = await store.rollout({ tenantId: acme, version: 2, percent: 100, by: "alice" });
    expect(done).toMatchObject({ version: 2, percent: 100, activeVersion: 2, activated: true, changed: true });
    const served = await store.active(acme);
    expect(served?.version).toBe(2);
    expect(served?.rollout).toBeUndefined();
    expect((await store.tenant(acme))?.rollout).toBeNull();
    expect(await auditRows()).toEqual([
      ["activate", 1, null, null, "ops"],
      ["rollout", 2, 1, "50 % of runs", "alice"],
      ["activate", 2, 1, "rollout complete", "alice"],
    ]);
    // The activation history has v1 before v2: a rollback returns to it.
    expect((await store.rollback({ tenantId: acme, by: "bob" })).version).toBe(1);
  });

  it("ends a rollout in progress on rollback, leaving the active version", async () => {
    await store.rollout({ tenantId: acme, version: 2, percent: 50, by: "alice" });
    const result = await store.rollback({ tenantId: acme, by: "bob" });
    expect(result).toEqual({
      tenantId: "acme",
      version: 1,
      previous: 1,
      changed: true,
      endedRollout: { version: 2, percent: 50 },
    });
    const served = await store.active(acme);
    expect(served?.version).toBe(1);
    expect(served?.rollout).toBeUndefined();
    expect(await auditRows()).toEqual([
      ["activate", 1, null, null, "ops"],
      ["rollout", 2, 1, "50 % of runs", "alice"],
      ["rollback", 1, 2, "rollout of v2 at 50 % ended", "bob"],
    ]);
    // With no rollout left, rollback walks the activation history again: v1 has nothing before it.
    expect((await rejection(store.rollback({ tenantId: acme, by: "bob" }))).code).toBe("no_previous");
  });

  it("ends a rollout when another version is activated, and says so", async () => {
    await store.rollout({ tenantId: acme, version: 2, percent: 50, by: "alice" });
    const result = await store.activate({ tenantId: acme, version: 3, by: "carol" });
    expect(result.endedRollout).toEqual({ version: 2, percent: 50 });
    expect((await store.audit({ tenantId: acme })).at(-1)).toMatchObject({
      type: "activate",
      version: 3,
      detail: "rollout of v2 at 50 % ended",
    });
    expect((await store.active(acme))?.rollout).toBeUndefined();
    const again = await store.activate({ tenantId: acme, version: 3, by: "carol" });
    expect(again).toMatchObject({ changed: false, endedRollout: null });
  });

  it("refuses a rollout of the active version, of an unknown one, with a bad share, or without an active version", async () => {
    const code = async (p: Promise<unknown>) => (await rejection(p)).code;
    expect(await code(store.rollout({ tenantId: acme, version: 1, percent: 50, by: "a" }))).toBe("active_version");
    expect(await code(store.rollout({ tenantId: acme, version: 9, percent: 50, by: "a" }))).toBe("not_found");
    for (const percent of [0, -5, 100.5, 12.345, Number.NaN, "50" as unknown as number]) {
      expect(await code(store.rollout({ tenantId: acme, version: 2, percent, by: "a" }))).toBe("invalid_input");
    }
    await store.upload({ tenantId: "globex" as TenantId, ...fakeBundle("g1"), by: "ops" });
    expect(await code(store.rollout({ tenantId: "globex" as TenantId, version: 1, percent: 5, by: "a" }))).toBe(
      "no_active",
    );
    expect((await store.active(acme))?.rollout).toBeUndefined();
    expect(await auditRows()).toEqual([["activate", 1, null, null, "ops"]]);
  });

  it("turns shadow mode on and off, serves the shadow with the active version, and audits both", async () => {
    expect(await store.shadow({ tenantId: acme, version: 3, by: "alice" })).toEqual({
      tenantId: "acme",
      version: 3,
      previous: null,
      changed: true,
    });
    const served = await store.active(acme);
    expect(served?.version).toBe(1);
    expect(served?.shadow?.version).toBe(3);
    expect(served?.shadow?.code).toBe(fakeBundle("a3").code);
    expect((await store.tenant(acme))?.shadow).toMatchObject({ version: 3, by: "alice" });
    expect((await store.versions(acme)).map((v) => v.shadow)).toEqual([false, false, true]);
    expect((await store.shadow({ tenantId: acme, version: 3, by: "alice" })).changed).toBe(false);
    expect(await store.shadow({ tenantId: acme, version: 2, by: "alice" })).toMatchObject({ version: 2, previous: 3 });
    expect(await store.shadow({ tenantId: acme, version: null, by: "bob" })).toEqual({
      tenantId: "acme",
      version: null,
      previous: 2,
      changed: true,
    });
    expect((await store.shadow({ tenantId: acme, version: null, by: "bob" })).changed).toBe(false);
    expect((await store.active(acme))?.shadow).toBeUndefined();
    expect(await auditRows()).toEqual([
      ["activate", 1, null, null, "ops"],
      ["shadow", 3, 1, null, "alice"],
      ["shadow", 2, 1, null, "alice"],
      ["shadow_off", 2, null, null, "bob"],
    ]);
  });

  it("keeps shadow mode across a rollout and refuses to shadow the active version", async () => {
    expect((await rejection(store.shadow({ tenantId: acme, version: 1, by: "a" }))).code).toBe("active_version");
    await store.shadow({ tenantId: acme, version: 2, by: "alice" });
    await store.rollout({ tenantId: acme, version: 3, percent: 20, by: "alice" });
    const served = await store.active(acme);
    expect([served?.version, served?.rollout?.bundle.version, served?.shadow?.version]).toEqual([1, 3, 2]);
  });

  it("refuses to delete a rolled-out or shadowed version", async () => {
    await store.rollout({ tenantId: acme, version: 2, percent: 20, by: "alice" });
    await store.shadow({ tenantId: acme, version: 3, by: "alice" });
    expect((await rejection(store.deleteVersion({ tenantId: acme, version: 2, by: "a" }))).code).toBe("in_use");
    expect((await rejection(store.deleteVersion({ tenantId: acme, version: 3, by: "a" }))).code).toBe("in_use");
    await store.rollback({ tenantId: acme, by: "a" });
    await store.shadow({ tenantId: acme, version: null, by: "a" });
    await store.deleteVersion({ tenantId: acme, version: 2, by: "a" });
    await store.deleteVersion({ tenantId: acme, version: 3, by: "a" });
    expect((await store.versions(acme)).map((v) => v.version)).toEqual([1]);
  });
});
