import { integerOption } from "../active-cache.js";
import { CheckedStore, type CheckedStoreOptions } from "../checked-store.js";
import { StoreError } from "../errors.js";
import type { UploadStep } from "../store-inputs.js";
import { type StoreLocation, storeLocation } from "../store-location.js";
import { PgCalls } from "./postgres-calls.js";
import { PostgresCheckpointLedger } from "./postgres-checkpoints.js";
import { PgConnections } from "./postgres-connections.js";
import { PostgresDriver } from "./postgres-driver.js";
import { pgStoreError } from "./postgres-errors.js";
import { PostgresQuarantine } from "./postgres-quarantine.js";
import { PostgresQueries } from "./postgres-queries.js";
import { type MigrationResult, prepareSchema } from "./postgres-schema.js";

export interface PostgresStoreOptions extends CheckedStoreOptions {
  /** Create the schema when it does not exist: default true. Read-only commands pass false. */
  readonly create?: boolean;
  /** The schema the store lives in; overrides the URL's `?schema=`. Default `isohook`. */
  readonly schema?: string;
  /** Connections in the pool (the LISTEN connection is one more): default 10. */
  readonly poolSize?: number;
  /** How long to wait for a connection before failing with `unavailable`: default 5000 ms. */
  readonly connectTimeoutMs?: number;
  /** How often the LISTEN connection is checked with a query: default 5000 ms. */
  readonly heartbeatMs?: number;
  /** Awaited inside the upload transaction after each write. For crash tests only. */
  readonly onUploadStep?: (step: UploadStep) => void | Promise<void>;
}

type PgLocation = Extract<StoreLocation, { kind: "postgres" }>;

/**
 * The PostgreSQL `BundleStore`, for many hosts sharing one store: the checked front end over
 * `PostgresDriver` (every write one transaction that locks the tenant's row, live pick-up through
 * LISTEN/NOTIFY), tables in a schema of their own, created and migrated under an advisory lock (see
 * postgres-schema.ts).
 * While the database is unreachable, `active()` serves the last known active versions and the store
 * reports `store.unreachable`; every other method rejects with `unavailable`.
 *
 * ```ts
 * const store = await PostgresBundleStore.open("postgres://isohook@db.internal/platform?schema=hooks");
 * ```
 */
export class PostgresBundleStore extends CheckedStore {
  readonly kind = "postgres";
  readonly checkpoints: PostgresCheckpointLedger;
  readonly quarantine: PostgresQuarantine;
  /** The schema the tables live in. */
  readonly schema: string;
  /** The connection string with any password replaced by `***`. */
  readonly location: string;
  /** The schema versions found and left by `open`. */
  readonly migration: MigrationResult;

  private constructor(
    driver: PostgresDriver,
    location: PgLocation,
    migration: MigrationResult,
    options: PostgresStoreOptions,
    shared: { readonly checkpoints: PostgresCheckpointLedger; readonly quarantine: PostgresQuarantine },
  ) {
    super(driver, options);
    this.checkpoints = shared.checkpoints;
    this.quarantine = shared.quarantine;
    this.schema = location.schema;
    this.location = location.display;
    this.migration = migration;
  }

  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresBundleStore> {
    const location = storeLocation(url, options.schema);
    if (location.kind !== "postgres")
      throw new StoreError("invalid_input", `Expected a postgres:// URL, got ${JSON.stringify(url)}.`);
    const db = await PgConnections.open({
      url: location.url,
      poolSize: integerOption("poolSize", options.poolSize ?? 10, 1, 1000),
      connectTimeoutMs: integerOption("connectTimeoutMs", options.connectTimeoutMs ?? 5_000, 1, 600_000),
    });
    try {
      const migration = await db.withClient((client) =>
        prepareSchema(client, location.schema, location.display, options.create ?? true),
      );
      const heartbeatMs = integerOption("heartbeatMs", options.heartbeatMs ?? 5_000, 10, 3_600_000);
      const { schema, display } = location;
      const calls = new PgCalls(db, display);
      const queries = new PostgresQueries(schema);
      const clock = options.clock ?? Date.now;
      // The book's channel rides on the driver's LISTEN connection, which the book may start first.
      let driver: PostgresDriver | undefined;
      const listen = async () => driver?.watch();
      const quarantine = new PostgresQuarantine({ schema, q: queries, pool: db.pool, calls, listen, clock });
      driver = new PostgresDriver(db, {
        queries,
        calls,
        schema,
        heartbeatMs,
        onUploadStep: options.onUploadStep,
        side: quarantine.side,
      });
      const checkpoints = new PostgresCheckpointLedger(schema, db.pool, display, (signal) => calls.open(signal));
      return new PostgresBundleStore(driver, location, migration, options, { checkpoints, quarantine });
    } catch (error) {
      await db.end();
      throw pgStoreError(error, location.display);
    }
  }
}
