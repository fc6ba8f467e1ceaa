import type { Client, ClientConfig, Pool, PoolClient } from "pg";

/** How long closing waits for a connection to say goodbye: a dead network never answers. */
const CLOSE_WAIT_MS = 1_000;

export interface ConnectionOptions {
  /** The connection string, without isohook's own parameters. */
  readonly url: string;
  readonly poolSize: number;
  readonly connectTimeoutMs: number;
}

/**
 * The PostgreSQL store's connections: a pool for reads and writes, and dedicated clients for LISTEN.
 * node-postgres is loaded here on first use (a dynamic import), so a host that only uses SQLite never
 * loads it. Every connection error is listened for: a dropped connection fails the call that uses it,
 * never the process.
 */
export class PgConnections {
  readonly pool: Pool;
  readonly #pg: typeof import("pg").default;
  readonly #config: ClientConfig;

  private constructor(pg: typeof import("pg").default, config: ClientConfig, poolSize: number) {
    this.#pg = pg;
    this.#config = config;
    this.pool = new pg.Pool({ ...config, max: poolSize });
    // An idle pooled connection that drops is replaced on next use.
    this.pool.on("error", () => undefined);
  }

  static async open(options: ConnectionOptions): Promise<PgConnections> {
    const pg = (await import("pg")).default;
    const types = new pg.TypeOverrides();
    // int8 (versions, ids, counts, ms times) as numbers: every value the store keeps is below 2^53.
    types.setTypeParser(20, Number);
    const config: ClientConfig = {
      connectionString: options.url,
      connectionTimeoutMillis: options.connectTimeoutMs,
      keepAlive: true,
      fallback_application_name: "isohook",
      types,
    };
    return new PgConnections(pg, config, options.poolSize);
  }

  /** A connected client of its own, outside the pool (LISTEN is per session). */
  async dedicated(): Promise<Client> {
    const client = new this.#pg.Client(this.#config);
    client.on("error", () => undefined);
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return client;
  }

  /** Runs `fn` on one pooled connection; one that failed mid-way is discarded, not given to the next caller. */
  async withClient<T>(fn: (client: PoolClient, fail: (error: Error) => void) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    // A connection that drops between two statements emits "error" on the client: the next query fails too.
    const fail = (error: Error) => {
      broken = error;
    };
    client.on("error", fail);
    try {
      return await fn(client, fail);
    } finally {
      client.off("error", fail);
      client.release(broken);
    }
  }

  /** Runs `fn` in one transaction: COMMIT when it resolves, ROLLBACK when it throws. */
  transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.withClient(async (client, fail) => {
      await client.query("BEGIN");
      try {
        const result = await fn(client);
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(fail);
        throw error;
      }
    });
  }

  async end(): Promise<void> {
    await untilOrAfter(this.pool.end(), CLOSE_WAIT_MS);
  }
}

/** Ends a dedicated client, waiting at most CLOSE_WAIT_MS for the server's goodbye. */
export async function endClient(client: Client): Promise<void> {
  await untilOrAfter(client.end(), CLOSE_WAIT_MS);
}

async function untilOrAfter(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([promise.catch(() => undefined), timeout]);
  clearTimeout(timer);
}
