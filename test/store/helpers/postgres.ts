import { randomBytes } from "node:crypto";
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
