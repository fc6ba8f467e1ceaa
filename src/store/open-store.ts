import type { ActiveCacheOptions } from "./active-cache.js";
import type { BundleStore } from "./bundle-store.js";
import { PostgresBundleStore } from "./postgres/postgres-store.js";
import { SqliteBundleStore } from "./sqlite/sqlite-store.js";
import { storeLocation } from "./store-location.js";

/** What every store takes when opened by location; each store's `open` takes more. */
export interface OpenStoreOptions extends ActiveCacheOptions {
  /** Create the store when there is none: default true. Read-only tools pass false. */
  readonly create?: boolean;
}

export type StoreKind = BundleStore["kind"];

/** A store opened by location, with the schema versions `open` found and left. */
export type OpenedStore = BundleStore & { readonly migration: { readonly from: number; readonly to: number } };

/**
 * Opens the store at a location: `postgres://…` / `postgresql://…` is a PostgreSQL store (`?schema=`
 * names its schema, default `isohook`), anything else is the path of a SQLite file. What the CLI's
 * `--store`, `ISOHOOK_STORE` and `createHookRuntime({ store })` accept.
 *
 * ```ts
 * const store = await openStore(process.env.ISOHOOK_STORE ?? ".isohook/store.db");
 * ```
 */
export async function openStore(location: string, options: OpenStoreOptions = {}): Promise<OpenedStore> {
  const parsed = storeLocation(location);
  switch (parsed.kind) {
    case "sqlite":
      return SqliteBundleStore.open(parsed.path, options);
    case "postgres":
      return PostgresBundleStore.open(location, options);
    default: {
      const never: never = parsed;
      throw new Error(`unknown store location ${JSON.stringify(never)}`);
    }
  }
}
