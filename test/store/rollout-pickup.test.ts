import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActiveBundle, TenantId } from "../../src/protocol/index.js";
import { type BundleStore, PostgresBundleStore, SqliteBundleStore } from "../../src/store/index.js";
import { fakeBundle } from "./helpers/bundles.js";
import { runStoreChild } from "./helpers/files.js";
import { dropSchema, freshSchema, pgUrl, postgresAvailable } from "./helpers/postgres.js";

const acme = "acme" as TenantId;
const withPostgres = await postgresAvailable();
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "isohook-rollout-pickup-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Asks `active()` until `ready` holds (pick-up is the cache's refresh: polling or a notification). */
async function servedWhen(
  store: BundleStore,
  ready: (b: ActiveBundle | undefined) => boolean,
): Promise<ActiveBundle | undefined> {
  const until = Date.now() + 10_000;
  for (;;) {
    const served = await store.active(acme);
    if (ready(served) || Date.now() > until) return served;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function pickUp(store: BundleStore, location: string) {
  for (const label of ["a1", "a2", "a3"]) {
    await store.upload({ tenantId: acme, ...fakeBundle(label), by: "ops", activate: label === "a1" });
  }
  expect((await store.active(acme))?.rollout).toBeUndefined();
  const child = (command: object) => runStoreChild({ path: location, tenantId: "acme", ...command });

  expect((await child({ op: "rollout", version: 2, percent: 30 })).code).toBe(0);
  const rolled = await servedWhen(store, (b) => b?.rollout !== undefined);
  expect([rolled?.version, rolled?.rollout?.bundle.version, rolled?.rollout?.percent]).toEqual([1, 2, 30]);

  expect((await child({ op: "shadow", version: 3 })).code).toBe(0);
  expect((await servedWhen(store, (b) => b?.shadow !== undefined))?.shadow?.version).toBe(3);

  expect((await child({ op: "rollback" })).code).toBe(0);
  const ended = await servedWhen(store, (b) => b?.rollout === undefined);
  expect([ended?.version, ended?.rollout, ended?.shadow?.version]).toEqual([1, undefined, 3]);
}

describe("another process's rollout and shadow changes reach a running store", () => {
  it("through SQLite's change counter", async () => {
    const path = join(dir, "store.db");
    const store = await SqliteBundleStore.open(path, { refreshMs: 50 });
    try {
      await pickUp(store, path);
    } finally {
      await store.close();
    }
  }, 60_000);

  it.runIf(withPostgres)(
    "through PostgreSQL's notifications",
    async () => {
      const schema = freshSchema();
      const store = await PostgresBundleStore.open(pgUrl(schema), { refreshMs: 60_000 });
      try {
        await pickUp(store, pgUrl(schema));
      } finally {
        await store.close();
        await dropSchema(schema);
      }
    },
    60_000,
  );
});
