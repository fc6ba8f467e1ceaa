import { resolve } from "node:path";
import { StoreError } from "./errors.js";

/** The PostgreSQL schema the store's tables live in unless `?schema=` or the `schema` option says otherwise. */
export const DEFAULT_PG_SCHEMA = "isohook";

/**
 * Where a store lives: a SQLite file, or a schema of a PostgreSQL database. It describes itself, so callers
 * need not branch on `kind`: `label` is what a message shows, `file` the file to look for, if any.
 */
export type StoreLocation =
  | { readonly kind: "sqlite"; readonly path: string; readonly label: string; readonly file: string }
  | {
      readonly kind: "postgres";
      /** The masked connection string and the schema, as messages show them. */
      readonly label: string;
      readonly file: undefined;
      /** The connection string without isohook's own `schema` parameter. */
      readonly url: string;
      readonly schema: string;
      /** The connection string with any password replaced by `***`: the only form that goes in messages. */
      readonly display: string;
    };

const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;
/** Lowercase identifiers only, so the name is the same quoted or not; short enough for the NOTIFY channel. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,47}$/;

/**
 * Reads a store location: `postgres://…` or `postgresql://…` is a PostgreSQL database (its `schema`
 * parameter, default `isohook`, names the schema; every other parameter goes to the driver), anything
 * else is the path of a SQLite file.
 *
 * ```ts
 * storeLocation("postgres://app@db.internal/platform?schema=hooks"); // { kind: "postgres", schema: "hooks", … }
 * storeLocation(".isohook/store.db"); // { kind: "sqlite", path: ".isohook/store.db", … }
 * ```
 */
export function storeLocation(location: string, schemaOption?: string): StoreLocation {
  if (!POSTGRES_URL.test(location)) return { kind: "sqlite", path: location, label: location, file: location };
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    throw new StoreError(
      "invalid_input",
      `Invalid PostgreSQL URL ${JSON.stringify(redact(location))}: use postgres://user[:password]@host[:port]/database[?schema=name].`,
    );
  }
  const fromUrl = url.searchParams.get("schema") ?? undefined;
  url.searchParams.delete("schema");
  const schema = checkSchemaName(schemaOption ?? fromUrl ?? DEFAULT_PG_SCHEMA);
  const bare = url.toString();
  const display = redact(bare);
  return { kind: "postgres", url: bare, schema, display, label: `${display} (schema ${schema})`, file: undefined };
}

/** A store location as given, with a file path resolved against `cwd` (a URL is kept as it is). */
export function resolveStoreLocation(location: string, cwd: string): string {
  return POSTGRES_URL.test(location) ? location : resolve(cwd, location);
}

export function checkSchemaName(schema: string): string {
  if (SCHEMA_NAME.test(schema)) return schema;
  throw new StoreError(
    "invalid_input",
    `Invalid PostgreSQL schema name ${JSON.stringify(schema)}: use 1–48 lowercase letters, digits or '_', starting with a letter or '_'.`,
  );
}

function redact(location: string): string {
  return location.replace(/^(postgres(?:ql)?:\/\/[^:/@]*):[^@/]*@/i, "$1:***@");
}
