import { userInfo } from "node:os";
import { TenantId } from "../protocol/index.js";
import { type BundleStore, type OpenedStore, openStore, resolveStoreLocation, StoreError } from "../store/index.js";
import { CliError, type CliIO, type OptionSpec, type ParsedArgs, stringFlag, UsageError } from "./command.js";

/** Where the store lives unless `--store` or `ISOHOOK_STORE` says otherwise (relative to the working directory). */
export const DEFAULT_STORE_PATH = ".isohook/store.db";

/** `--store <path|url>`, shared by every command that reads or writes the bundle store. */
export const STORE_OPTION: OptionSpec = { store: { type: "string" } };

export const STORE_HELP = `  --store <path|url> The bundle store: a SQLite file, or postgres://… (default: $ISOHOOK_STORE, else ${DEFAULT_STORE_PATH})`;

/**
 * The store location: `--store`, then `ISOHOOK_STORE`, then `.isohook/store.db`. A `postgres://` URL is
 * kept as is; a path is resolved against the working directory.
 */
export function storeLocationOf(args: ParsedArgs, io: CliIO): string {
  const chosen = stringFlag(args, "store") ?? io.env.ISOHOOK_STORE ?? DEFAULT_STORE_PATH;
  if (chosen === "")
    throw new UsageError("Expected --store to be a file path or a postgres:// URL, got an empty string");
  return resolveStoreLocation(chosen, io.cwd);
}

/**
 * Opens the store for one command, runs `fn` and closes it. Read-only commands pass `create: false` so a
 * mistyped path is an error, not a new empty store. Store failures become CliErrors (exit 1) whose
 * message says what to do next.
 */
export async function withStore<T>(
  args: ParsedArgs,
  io: CliIO,
  options: { readonly create: boolean },
  fn: (store: OpenedStore) => Promise<T>,
): Promise<T> {
  const location = storeLocationOf(args, io);
  let store: BundleStore | undefined;
  try {
    const opened = await openStore(location, { create: options.create });
    store = opened;
    return await fn(opened);
  } catch (error) {
    throw cliStoreError(error);
  } finally {
    await store?.close();
  }
}

/** A StoreError as the CliError (exit 1) that carries its message and code; anything else unchanged. */
export function cliStoreError(error: unknown): unknown {
  return error instanceof StoreError ? new CliError(error.message, error.code) : error;
}

/** `--tenant <id>`, validated: a bad id is a usage error that says what ids look like. */
export function tenantFlag(args: ParsedArgs, required: true): TenantId;
export function tenantFlag(args: ParsedArgs, required: false): TenantId | undefined;
export function tenantFlag(args: ParsedArgs, required: boolean): TenantId | undefined {
  const raw = required ? stringFlag(args, "tenant", true) : stringFlag(args, "tenant");
  if (raw === undefined) return undefined;
  const parsed = TenantId.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw new UsageError(
    `Invalid --tenant ${JSON.stringify(raw)}: use 1–64 characters of lowercase letters, digits, '.', '_' or '-', starting with a letter or digit`,
  );
}

/**
 * Who is acting, for the audit log: `--by`, else $USER, else $LOGNAME, else the OS user name (containers
 * and CI often set no $USER).
 */
export function uploaderOf(args: ParsedArgs, io: CliIO): string {
  const flag = stringFlag(args, "by");
  const by = flag ?? (io.env.USER || io.env.LOGNAME || osUserName());
  if (by === undefined || by === "") {
    throw new UsageError("Pass --by <name> (or set $USER): every change to the store is audited with who made it");
  }
  return by;
}

function osUserName(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined; // no passwd entry for this uid (some containers)
  }
}

export const BY_OPTION: OptionSpec = { by: { type: "string" } };
export const BY_HELP =
  "  --by <name>        Who is making the change, for the audit log (default: $USER, else the OS user)";
