import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TenantId } from "../../src/protocol/index.js";
import { PostgresBundleStore } from "../../src/store/index.js";
import { readChange } from "../../src/store/postgres/postgres-head.js";
import { fakeBundle } from "./helpers/bundles.js";
import { dropSchema, freshSchema, PG_TEST_URL, pgUrl, postgresAvailable } from "./helpers/postgres.js";

const acme = "acme" as TenantId;

/**
 * What a change NOTIFYs: the tenant's head after it (versions, hashes, configs; never code), the same a
 * read of the head gives, so a host with that code cached serves it without a round trip.
 */
describe.runIf(await postgresAvailable())("the PostgreSQL change notification", () => {
  const schema = freshSchema();
  let store: PostgresBundleStore;
  let listener: pg.Client;
  const payloads: string[] = [];
  /** What the store's own channel carried: all a host of an earlier release reads. */
  const named: string[] = [];

  beforeAll(async () => {
    store = await PostgresBundleStore.open(pgUrl(schema));
    listener = new pg.Client({ connectionString: PG_TEST_URL });
    await listener.connect();
    listener.on("notification", (n) => {
      if (n.channel === `isohook:${schema}:head` && n.payload !== undefined) payloads.push(n.payload);
      if (n.channel === `isohook:${schema}` && n.payload !== undefined) named.push(n.payload);
    });
    await listener.query(`LISTEN "isohook:${schema}:head"`);
    await listener.query(`LISTEN "isohook:${schema}"`);
  });
  afterAll(async () => {
    await listener.end();
    await store.close();
    await dropSchema(schema);
  });

  /** The payload of the next change `act` makes. */
  async function notified(act: () => Promise<unknown>): Promise<string> {
    const before = payloads.length;
    await act();
    for (let i = 0; i < 500 && payloads.length === before; i++) await new Promise((r) => setTimeout(r, 10));
    const payload = payloads[before];
    if (payload === undefined) throw new Error("no notification within 5 s");
    return payload;
  }

  it("carries the head after an activation, a rollout, a shadow and a rollback", async () => {
    const v1 = fakeBundle("n1");
    const v2 = fakeBundle("n2");
    const v3 = fakeBundle("n3");
    const first = await notified(() =>
      store.upload({ tenantId: acme, ...v1, config: { level: 1 }, by: "ops", activate: true }),
    );
    expect(readChange(first)).toEqual({
      tenantId: acme,
      head: { version: 1, hash: v1.manifest.hash, config: { level: 1 } },
    });
    await store.upload({ tenantId: acme, ...v2, config: { level: 2 }, by: "ops" });
    await store.upload({ tenantId: acme, ...v3, by: "ops" });
    const rollout = await notified(() => store.rollout({ tenantId: acme, version: 2, percent: 25, by: "ops" }));
    expect(readChange(rollout)?.head).toEqual({
      version: 1,
      hash: v1.manifest.hash,
      config: { level: 1 },
      rollout: { version: 2, hash: v2.manifest.hash, config: { level: 2 }, percent: 25 },
    });
    const shadow = await notified(() => store.shadow({ tenantId: acme, version: 3, by: "ops" }));
    expect(readChange(shadow)?.head?.shadow).toEqual({ version: 3, hash: v3.manifest.hash, config: { level: 2 } });
    // An activation ends the rollout; the shadow stays.
    const activated = await notified(() => store.activate({ tenantId: acme, version: 2, by: "ops" }));
    expect(readChange(activated)?.head).toEqual({
      version: 2,
      hash: v2.manifest.hash,
      config: { level: 2 },
      shadow: { version: 3, hash: v3.manifest.hash, config: { level: 2 } },
    });
    const rolledBack = await notified(() => store.rollback({ tenantId: acme, by: "ops" }));
    expect(readChange(rolledBack)?.head).toMatchObject({ version: 1, config: { level: 1 } });
    for (const p of [first, rollout, shadow, activated, rolledBack]) expect(p).not.toContain("code");
    // Each change also names its tenant on the store's channel, which is all an earlier release reads.
    expect(named).toEqual(["acme", "acme", "acme", "acme", "acme"]);
  });

  it("picks up a change that only names its tenant, as a writer of an earlier release sends it", async () => {
    const tenantId = "oldco" as TenantId;
    const v1 = fakeBundle("o1");
    const v2 = fakeBundle("o2");
    await store.upload({ tenantId, ...v1, by: "ops", activate: true });
    await store.upload({ tenantId, ...v2, by: "ops" });
    const host = await PostgresBundleStore.open(pgUrl(schema));
    try {
      expect((await host.active(tenantId))?.version).toBe(1);
      const writer = new pg.Client({ connectionString: PG_TEST_URL });
      await writer.connect();
      await writer.query("BEGIN");
      await writer.query(`UPDATE "${schema}".tenants SET active_version = 2 WHERE id = $1`, [tenantId]);
      await writer.query("SELECT pg_notify($1, $2)", [`isohook:${schema}`, tenantId]);
      await writer.query("COMMIT");
      await writer.end();
      let version = (await host.active(tenantId))?.version;
      for (let i = 0; i < 500 && version !== 2; i++) {
        await new Promise((r) => setTimeout(r, 10));
        version = (await host.active(tenantId))?.version;
      }
      expect(version).toBe(2);
    } finally {
      await host.close();
    }
  });

  it("names the tenant only when the head would not fit in a notification", async () => {
    const big = { blob: "x".repeat(6_000) };
    const tenantId = "bigco" as TenantId;
    await store.upload({ tenantId, ...fakeBundle("b1"), config: big, by: "ops", activate: true });
    await store.upload({ tenantId, ...fakeBundle("b2"), config: big, by: "ops" });
    const payload = await notified(() => store.rollout({ tenantId, version: 2, percent: 50, by: "ops" }));
    expect(payload).toBe("bigco");
    expect(readChange(payload)).toEqual({ tenantId, head: undefined });
  });
});
