import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TenantId } from "../../src/protocol/index.js";
import { PostgresBundleStore, StoreError, type StoreEvent } from "../../src/store/index.js";
import { fakeBundle } from "./helpers/bundles.js";
import {
  CuttableProxy,
  dropSchema,
  freshSchema,
  pgQuery,
  pgUrl,
  postgresAvailable,
  proxiedUrl,
} from "./helpers/postgres.js";

const acme = "acme" as TenantId;
const available = await postgresAvailable();

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let schema: string;
let proxy: CuttableProxy;

beforeEach(async () => {
  schema = freshSchema();
  proxy = new CuttableProxy();
  await proxy.up();
});
afterEach(async () => {
  await proxy.down();
  await dropSchema(schema);
});

describe.skipIf(!available)("a host whose PostgreSQL store goes down", () => {
  it("keeps serving the last known active versions, says so once, and picks up what changed when it is back", async () => {
    const admin = await PostgresBundleStore.open(pgUrl(schema));
    await admin.upload({ tenantId: acme, ...fakeBundle("v1"), by: "ops", activate: true });
    await admin.upload({ tenantId: acme, ...fakeBundle("v2"), by: "ops" });
    const events: StoreEvent[] = [];
    const host = await PostgresBundleStore.open(proxiedUrl(schema, proxy), {
      refreshMs: 50,
      connectTimeoutMs: 1_000,
      onEvent: (event) => events.push(event),
    });
    expect((await host.active(acme))?.version).toBe(1);

    await proxy.down();
    await until("store.unreachable", () => events.length > 0);
    expect(events[0]).toMatchObject({ type: "store.unreachable", store: "postgres" });
    await admin.activate({ tenantId: acme, version: 2, by: "ops" });
    for (let i = 0; i < 3; i++) expect((await host.active(acme))?.version).toBe(1);
    const unknown = await host.active("globex" as TenantId).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(unknown).toBeInstanceOf(StoreError);
    expect((unknown as StoreError).code).toBe("unavailable");
    const admin2 = await host.tenants().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((admin2 as StoreError).code).toBe("unavailable");
    expect((admin2 as StoreError).message).toContain("Cannot reach the PostgreSQL store");

    await proxy.up();
    await until("store.reachable", () => events.length > 1);
    expect((await host.active(acme))?.version).toBe(2);
    expect(events.map((e) => e.type)).toEqual(["store.unreachable", "store.reachable"]);
    await host.close();
    await admin.close();
  });

  it("re-opens a killed LISTEN connection and picks up what changed meanwhile and after", async () => {
    const admin = await PostgresBundleStore.open(pgUrl(schema));
    await admin.upload({ tenantId: acme, ...fakeBundle("v1"), by: "ops", activate: true });
    await admin.upload({ tenantId: acme, ...fakeBundle("v2"), by: "ops" });
    const app = `isohook-listen-${schema}`;
    const events: StoreEvent[] = [];
    const host = await PostgresBundleStore.open(pgUrl(schema, { application_name: app }), {
      onEvent: (event) => events.push(event),
    });
    const served = async () => (await host.active(acme))?.version;
    expect(await served()).toBe(1);
    const listeners = () =>
      pgQuery<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'",
        [app],
      );
    const [first] = await listeners();
    await pgQuery("SELECT pg_terminate_backend($1)", [first?.pid]);
    await admin.activate({ tenantId: acme, version: 2, by: "ops" });
    let version = await served();
    for (let i = 0; i < 200 && version !== 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      version = await served();
    }
    expect(version).toBe(2);
    const again = await listeners();
    expect(again).toHaveLength(1);
    expect(again[0]?.pid).not.toBe(first?.pid);
    await admin.rollback({ tenantId: acme, by: "ops" });
    for (let i = 0; i < 200 && version !== 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      version = await served();
    }
    expect(version).toBe(1);
    expect(events).toEqual([]);
    await host.close();
    await admin.close();
  });
});
