import { randomBytes } from "node:crypto";
import { connect, createServer, type Server, type Socket } from "node:net";
import pg from "pg";

/** The PostgreSQL server the store tests use: `ISOHOOK_TEST_PG`, else the local trust-auth server. */
export const PG_TEST_URL = process.env.ISOHOOK_TEST_PG ?? "postgres://root@127.0.0.1:5432/test";
const START = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start";

let probed: Promise<boolean> | undefined;

/**
 * Whether the PostgreSQL tests can run. In CI (env CI set) an unreachable server fails the suite with
 * the command that starts it; elsewhere the tests skip with one line saying why.
 */
export function postgresAvailable(): Promise<boolean> {
  probed ??= (async () => {
    try {
      await pgQuery("SELECT 1");
      return true;
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      if (process.env.CI) {
        throw new Error(`PostgreSQL at ${PG_TEST_URL} is unreachable (${why}). Start it with: ${START}`);
      }
      console.warn(
        `Skipping the PostgreSQL store tests: ${PG_TEST_URL} is unreachable (${why}). Start it with: ${START}`,
      );
      return false;
    }
  })();
  return probed;
}

/** A schema name no other test uses. */
export function freshSchema(): string {
  return `t_${randomBytes(6).toString("hex")}`;
}

/** The test server's URL for one schema. */
export function pgUrl(schema: string, params: Record<string, string> = {}): string {
  const url = new URL(PG_TEST_URL);
  url.searchParams.set("schema", schema);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}

/** One statement on a connection of its own (set-up, inspection, pg_terminate_backend). */
export async function pgQuery<R extends object = Record<string, unknown>>(
  sql: string,
  params: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: PG_TEST_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await pgQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/** A TCP pass-through to the test server that can be cut and restored: the database "goes down" for one store only. */
export class CuttableProxy {
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

/** The test server's URL for one schema, through a proxy on this machine. */
export function proxiedUrl(schema: string, proxy: CuttableProxy): string {
  const url = new URL(pgUrl(schema));
  url.port = String(proxy.port);
  return url.toString();
}
