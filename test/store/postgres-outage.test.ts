import { connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TenantId } from "../../src/protocol/index.js";
import { PostgresBundleStore, StoreError, type StoreEvent } from "../../src/store/index.js";
import { fakeBundle } from "./helpers/bundles.js";
import { dropSchema, freshSchema, PG_TEST_URL, pgUrl, postgresAvailable } from "./helpers/postgres.js";

const acme = "acme" as TenantId;
const available = await postgresAvailable();

/** A TCP pass-through to the test server that can be cut and restored: the database "goes down" for one store only. */
class CuttableProxy {
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  port = 0;

  async up(): Promise<void> {
    const target = new URL(PG_TEST_URL);
    const server = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      for (const [a, b] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        this.#sockets.add(a);
        a.pipe(b);
        a.on("error", () => b.destroy());
        a.on("close", () => {
          this.#sockets.delete(a);
          b.destroy();
        });
      }
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    const address = server.address();
    if (typeof address === "object" && address) this.port = address.port;
    this.#server = server;
  }

  async down(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

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
    const through = new URL(pgUrl(schema));
    through.port = String(proxy.port);
    const host = await PostgresBundleStore.open(through.toString(), {
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
});
