import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type BundleStore,
  MemoryBundleStore,
  PostgresBundleStore,
  SqliteBundleStore,
} from "../../../src/store/index.js";
import { dropSchema, freshSchema, pgUrl, postgresAvailable } from "./postgres.js";

/** Opens a fresh, empty store; the returned cleanup removes everything it made. */
export type StoreFactory = () => Promise<{ store: BundleStore; cleanup: () => Promise<void> }>;

/**
 * The three stores of the contract suite, opened with `options`: memory, SQLite in a temporary folder and,
 * when a server answers, PostgreSQL in a schema of its own per test (dropped afterwards).
 */
export async function storeFactories(options: {
  clock: () => number;
  maxBundleBytes: number;
}): Promise<[string, StoreFactory][]> {
  const factories: [string, StoreFactory][] = [
    ["memory", async () => ({ store: new MemoryBundleStore(options), cleanup: async () => {} })],
    [
      "sqlite",
      async () => {
        const dir = mkdtempSync(join(tmpdir(), "isohook-store-"));
        const store = await SqliteBundleStore.open(join(dir, "store.db"), options);
        return { store, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
      },
    ],
  ];
  if (await postgresAvailable()) {
    factories.push([
      "postgres",
      async () => {
        const schema = freshSchema();
        const store = await PostgresBundleStore.open(pgUrl(schema), options);
        return { store, cleanup: () => dropSchema(schema) };
      },
    ]);
  }
  return factories;
}
