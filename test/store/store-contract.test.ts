import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TenantId } from "../../src/protocol/index.js";
import type { BundleStore } from "../../src/store/index.js";
import { fakeBundle } from "./helpers/bundles.js";
import { rejection } from "./helpers/rejection.js";
import { storeFactories } from "./helpers/store-factories.js";

const acme = "acme" as TenantId;
const globex = "globex" as TenantId;

let clock = 0;
const tick = () => 1_700_000_000_000 + ++clock * 1000;
const options = { clock: tick, maxBundleBytes: 4096 };

const factories = await storeFactories(options);

describe.each(factories)("BundleStore contract (%s)", (_name, open) => {
  let store: BundleStore;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    clock = 0;
    ({ store, cleanup } = await open());
  });
  afterEach(async () => {
    await store.close();
    await cleanup();
  });

  const upload = (tenantId: TenantId, label: string, extra: { activate?: boolean; config?: unknown } = {}) =>
    store.upload({ tenantId, ...fakeBundle(label), by: "ops", ...(extra as { activate?: boolean }) });

  it("allocates monotonic versions per tenant starting at 1", async () => {
    const a1 = await upload(acme, "a1");
    const a2 = await upload(acme, "a2");
    const g1 = await upload(globex, "g1");
    expect([a1.version.version, a2.version.version, g1.version.version]).toEqual([1, 2, 1]);
    expect(a1.version).toMatchObject({ tenantId: "acme", active: false, uploadedBy: "ops", hookPoints: ["tool.call"] });
    expect(a1.activated).toBe(false);
  });

  it("stores each bundle once by hash and shares it between versions", async () => {
    const first = await upload(acme, "same");
    const second = await upload(acme, "same");
    const other = await upload(globex, "same");
    expect([first.bundleCreated, second.bundleCreated, other.bundleCreated]).toEqual([true, false, false]);
    expect(second.version.hash).toBe(first.version.hash);
    const stored = await store.bundle(first.version.hash);
    expect(stored?.code).toBe(fakeBundle("same").code);
    expect(stored?.sourceMap).toBe(fakeBundle("same").sourceMap);
    expect(stored?.manifest).toEqual(fakeBundle("same").manifest);
  });

  it("activates on upload when asked and serves the active bundle with its config", async () => {
    const result = await store.upload({
      tenantId: acme,
      ...fakeBundle("a1"),
      by: "ops",
      config: { max: 3 },
      activate: true,
    });
    expect(result.activated).toBe(true);
    const active = await store.active(acme);
    expect(active).toMatchObject({ tenantId: "acme", version: 1, code: fakeBundle("a1").code, config: { max: 3 } });
    expect(active?.manifest.hash).toBe(result.version.hash);
    // Served with its source map, so a failure's stack names the author's files.
    expect(active?.sourceMap).toBe(fakeBundle("a1").sourceMap);
  });

  it("serves nothing for a tenant without an active version or an unknown tenant", async () => {
    await upload(acme, "a1");
    expect(await store.active(acme)).toBeUndefined();
    expect(await store.active(globex)).toBeUndefined();
  });

  it("carries the latest version's config forward when an upload has none", async () => {
    await store.upload({ tenantId: acme, ...fakeBundle("a1"), by: "ops", config: { mode: "strict" } });
    await upload(acme, "a2");
    await store.upload({ tenantId: acme, ...fakeBundle("a3"), by: "ops", config: ["x"] });
    await upload(globex, "g1");
    expect((await store.version(acme, 2))?.config).toEqual({ mode: "strict" });
    expect((await store.version(acme, 3))?.config).toEqual(["x"]);
    expect((await store.version(globex, 1))?.config).toEqual({});
  });

  it("switches the served version at once after its own activation, and earlier answers stay as they were", async () => {
    await upload(acme, "a1", { activate: true });
    await upload(acme, "a2");
    const before = await store.active(acme);
    const result = await store.activate({ tenantId: acme, version: 2, by: "ops" });
    expect(result).toEqual({ tenantId: "acme", version: 2, previous: 1, changed: true, endedRollout: null });
    expect((await store.active(acme))?.version).toBe(2);
    expect(before?.version).toBe(1);
    expect(before?.code).toBe(fakeBundle("a1").code);
    expect(Object.isFrozen(before)).toBe(true);
  });

  it("treats activating the active version as no change and logs nothing", async () => {
    await upload(acme, "a1", { activate: true });
    const result = await store.activate({ tenantId: acme, version: 1, by: "ops" });
    expect(result).toEqual({ tenantId: "acme", version: 1, previous: 1, changed: false, endedRollout: null });
    expect((await store.audit()).map((e) => e.type)).toEqual(["upload", "activate"]);
  });

  it("rolls back through the activation history and then refuses", async () => {
    for (const label of ["a1", "a2", "a3"]) await upload(acme, label, { activate: true });
    expect(await store.rollback({ tenantId: acme, by: "ops" })).toEqual({
      tenantId: "acme",
      version: 2,
      previous: 3,
      changed: true,
      endedRollout: null,
    });
    expect((await store.rollback({ tenantId: acme, by: "ops" })).version).toBe(1);
    expect((await store.active(acme))?.version).toBe(1);
    expect((await rejection(store.rollback({ tenantId: acme, by: "ops" }))).code).toBe("no_previous");
  });

  it("rolls back to the version active before an explicit re-activation", async () => {
    for (const label of ["a1", "a2"]) await upload(acme, label, { activate: true });
    await store.activate({ tenantId: acme, version: 1, by: "ops" });
    expect((await store.rollback({ tenantId: acme, by: "ops" })).version).toBe(2);
  });

  it("refuses a rollback with no active version or for an unknown tenant", async () => {
    await upload(acme, "a1");
    expect((await rejection(store.rollback({ tenantId: acme, by: "ops" }))).code).toBe("no_previous");
    expect((await rejection(store.rollback({ tenantId: globex, by: "ops" }))).code).toBe("not_found");
  });

  it("refuses to activate an unknown tenant or version", async () => {
    await upload(acme, "a1");
    expect((await rejection(store.activate({ tenantId: globex, version: 1, by: "ops" }))).code).toBe("not_found");
    const missing = await rejection(store.activate({ tenantId: acme, version: 7, by: "ops" }));
    expect(missing.code).toBe("not_found");
    expect(missing.message).toContain("isohook versions --tenant acme");
  });

  it("deletes an inactive version, never reuses its number, and drops a bundle no version uses", async () => {
    await upload(acme, "a1", { activate: true });
    const a2 = await upload(acme, "a2");
    expect((await rejection(store.deleteVersion({ tenantId: acme, version: 1, by: "ops" }))).code).toBe(
      "active_version",
    );
    await store.deleteVersion({ tenantId: acme, version: 2, by: "ops" });
    expect((await store.versions(acme)).map((v) => v.version)).toEqual([1]);
    expect(await store.bundle(a2.version.hash)).toBeUndefined();
    expect((await upload(acme, "a3")).version.version).toBe(3);
    expect((await rejection(store.deleteVersion({ tenantId: acme, version: 2, by: "ops" }))).code).toBe("not_found");
  });

  it("keeps a shared bundle when one of its versions is deleted and forgets deleted versions in rollback", async () => {
    await upload(acme, "same", { activate: true });
    await upload(acme, "a2", { activate: true });
    const shared = await upload(acme, "same", { activate: true });
    await store.deleteVersion({ tenantId: acme, version: 1, by: "ops" });
    expect(await store.bundle(shared.version.hash)).toBeDefined();
    expect((await store.rollback({ tenantId: acme, by: "ops" })).version).toBe(2);
    expect((await rejection(store.rollback({ tenantId: acme, by: "ops" }))).code).toBe("no_previous");
  });

  it("lists tenants with their active and latest versions", async () => {
    await upload(globex, "g1");
    const a1 = await upload(acme, "a1", { activate: true });
    await upload(acme, "a2");
    const tenants = await store.tenants();
    expect(tenants.map((t) => t.tenantId)).toEqual(["acme", "globex"]);
    expect(tenants[0]).toMatchObject({
      activeVersion: 1,
      activeHash: a1.version.hash,
      latestVersion: 2,
      versionCount: 2,
    });
    expect(tenants[1]).toMatchObject({ activeVersion: null, activeHash: null, latestVersion: 1, versionCount: 1 });
    expect(await store.tenant(acme)).toEqual(tenants[0]);
    expect(await store.tenant("nobody" as TenantId)).toBeUndefined();
  });

  it("lists a tenant's versions oldest first with the active one marked", async () => {
    await upload(acme, "a1");
    await upload(acme, "a2", { activate: true });
    const versions = await store.versions(acme);
    expect(versions.map((v) => [v.version, v.active])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect((await rejection(store.versions(globex))).code).toBe("not_found");
  });

  it("describes one version with manifest, config, gate report and source map size", async () => {
    const bundle = fakeBundle("a1", ["tool.call", "turn.end"]);
    await store.upload({
      tenantId: acme,
      ...bundle,
      by: "ops",
      config: { k: 1 },
      gateReport: { passed: true },
      activate: true,
    });
    const detail = await store.version(acme);
    expect(detail).toMatchObject({
      version: 1,
      active: true,
      manifest: bundle.manifest,
      hookPoints: ["tool.call", "turn.end"],
      config: { k: 1 },
      gateReport: { passed: true },
      sourceMapBytes: bundle.sourceMap.length,
    });
    expect(await store.version(acme, 1)).toEqual(detail);
    expect(await store.version(acme, 9)).toBeUndefined();
    expect(await store.version(globex)).toBeUndefined();
  });

  it("keeps a manifest's tool matchers and observe-only points as the bundler recorded them", async () => {
    const bundle = fakeBundle("matched");
    const manifest = {
      ...bundle.manifest,
      tools: { "tool.call": ["shell", "git_*"] },
      observe: { hookPoints: ["tool.result" as const, "run.end" as const], tools: { "tool.result": ["read_?ile"] } },
    };
    await store.upload({ tenantId: acme, ...bundle, manifest, by: "ops", activate: true });
    expect((await store.version(acme))?.manifest).toEqual(manifest);
    expect((await store.active(acme))?.manifest).toEqual(manifest);
  });

  it("audits every upload, activation, rollback and deletion with who and from which version", async () => {
    await upload(acme, "a1", { activate: true });
    await store.upload({ tenantId: acme, ...fakeBundle("a2"), by: "alice", activate: true });
    await store.rollback({ tenantId: acme, by: "bob" });
    await store.deleteVersion({ tenantId: acme, version: 2, by: "carol" });
    await upload(globex, "g1");
    const audit = await store.audit();
    expect(audit.map((e) => [e.tenantId, e.type, e.version, e.fromVersion, e.by])).toEqual([
      ["acme", "upload", 1, null, "ops"],
      ["acme", "activate", 1, null, "ops"],
      ["acme", "upload", 2, null, "alice"],
      ["acme", "activate", 2, 1, "alice"],
      ["acme", "rollback", 1, 2, "bob"],
      ["acme", "delete", 2, null, "carol"],
      ["globex", "upload", 1, null, "ops"],
    ]);
    expect(audit.every((e, i) => e.id > (audit[i - 1]?.id ?? 0))).toBe(true);
    expect(audit[0]?.hash).toBe(fakeBundle("a1").manifest.hash);
    expect(audit[0]?.at).toBe(new Date(1_700_000_001_000).toISOString());
    expect((await store.audit({ tenantId: globex })).map((e) => e.type)).toEqual(["upload"]);
    expect((await store.audit({ limit: 2 })).map((e) => e.type)).toEqual(["delete", "upload"]);
    expect((await rejection(store.audit({ limit: 0 }))).code).toBe("invalid_input");
  });

  it.each([
    ["path traversal", "../x"],
    ["sql injection", "a'; DROP TABLE tenants; --"],
    ["uppercase", "Acme"],
    ["empty", ""],
    ["too long", "a".repeat(65)],
    ["slash", "a/b"],
    ["leading dot", ".hidden"],
    ["not a string", 42],
  ])("rejects a tenant id with %s everywhere", async (_what, bad) => {
    const tenantId = bad as TenantId;
    await upload(acme, "a1", { activate: true });
    const calls = [
      store.upload({ tenantId, ...fakeBundle("x"), by: "ops" }),
      store.activate({ tenantId, version: 1, by: "ops" }),
      store.rollback({ tenantId, by: "ops" }),
      store.deleteVersion({ tenantId, version: 1, by: "ops" }),
      store.versions(tenantId),
      store.version(tenantId),
      store.tenant(tenantId),
      store.active(tenantId),
      store.audit({ tenantId }),
    ];
    for (const call of calls) expect((await rejection(call)).code).toBe("invalid_tenant");
    expect((await store.tenants()).map((t) => t.tenantId)).toEqual(["acme"]);
    expect((await store.active(acme))?.version).toBe(1);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, "1", null])(
    "rejects the version %s",
    async (bad) => {
      await upload(acme, "a1");
      const version = bad as number;
      expect((await rejection(store.activate({ tenantId: acme, version, by: "ops" }))).code).toBe("invalid_version");
      expect((await rejection(store.deleteVersion({ tenantId: acme, version, by: "ops" }))).code).toBe(
        "invalid_version",
      );
      expect((await rejection(store.version(acme, version))).code).toBe("invalid_version");
    },
  );

  it("rejects uploads whose manifest does not match the code, or that are too big, and stores nothing", async () => {
    const good = fakeBundle("a1");
    const other = fakeBundle("other");
    const cases: [string, Promise<unknown>][] = [
      ["hash", store.upload({ tenantId: acme, ...good, manifest: other.manifest, by: "ops" })],
      ["bytes", store.upload({ tenantId: acme, ...good, manifest: { ...good.manifest, bytes: 1 }, by: "ops" })],
      [
        "point",
        store.upload({
          tenantId: acme,
          ...good,
          manifest: { ...good.manifest, hookPoints: ["tool.nope"] } as never,
          by: "ops",
        }),
      ],
      ["size", store.upload({ tenantId: acme, ...fakeBundle("x".repeat(5000)), by: "ops" })],
      ["config", store.upload({ tenantId: acme, ...good, config: { f: () => 1 } as never, by: "ops" })],
      ["big config", store.upload({ tenantId: acme, ...good, config: "x".repeat(70_000), by: "ops" })],
      ["empty by", store.upload({ tenantId: acme, ...good, by: "" })],
      ["control by", store.upload({ tenantId: acme, ...good, by: "ops\nINJECTED" })],
    ];
    for (const [what, call] of cases) {
      const error = await rejection(call);
      expect([what, error.code]).toEqual([what, "invalid_input"]);
    }
    expect(await store.tenants()).toEqual([]);
    expect(await store.audit()).toEqual([]);
  });

  it("stores quotes and SQL in free text verbatim", async () => {
    const by = `o'brien"); DROP TABLE audit; --`;
    await store.upload({ tenantId: acme, ...fakeBundle("a1"), by, config: { q: "'; DELETE FROM versions; --" } });
    expect((await store.audit())[0]?.by).toBe(by);
    expect((await store.version(acme, 1))?.config).toEqual({ q: "'; DELETE FROM versions; --" });
  });

  it("rejects calls after close and on an aborted signal", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(store.tenants(controller.signal)).rejects.toThrow(/abort/i);
    await store.close();
    expect((await rejection(store.tenants())).code).toBe("closed");
  });
});
