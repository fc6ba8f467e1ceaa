import { StoreError } from "../errors.js";

/** Turns a better-sqlite3 or file-system error into a StoreError that says what to do next. */
export function toStoreError(error: unknown, path: string, busyTimeoutMs: number): StoreError {
  if (error instanceof StoreError) return error;
  const code = errorCode(error);
  const detail = error instanceof Error ? error.message : String(error);
  if (code === "SQLITE_NOTADB") return foreign(path, "not an SQLite database");
  if (code.startsWith("SQLITE_CORRUPT")) return corrupt(path, detail);
  if (code === "SQLITE_ERROR" && /no such (table|column)/.test(detail)) return corrupt(path, detail);
  if (code.startsWith("SQLITE_FULL") || code === "ENOSPC" || (code === "SQLITE_IOERR_WRITE" && /full/i.test(detail))) {
    return new StoreError(
      "full",
      `The store at ${path} is full (${detail}). Free disk space (or raise the store's size cap) and retry; nothing was written.`,
      { cause: error },
    );
  }
  if (
    code.startsWith("SQLITE_READONLY") ||
    code.startsWith("SQLITE_CANTOPEN") ||
    code === "SQLITE_PERM" ||
    code === "EACCES" ||
    code === "EPERM" ||
    code === "EROFS"
  ) {
    return new StoreError(
      "read_only",
      `Cannot write the store at ${path} (${detail}). Check the permissions of the file and its folder, or pass --store <writable path>.`,
      { cause: error },
    );
  }
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
    return new StoreError(
      "busy",
      `The store at ${path} stayed locked by another process for over ${busyTimeoutMs} ms. Retry when the other write finishes.`,
      { cause: error },
    );
  }
  return new StoreError("io", `I/O error on the store at ${path}: ${detail}. Check the disk and retry.`, {
    cause: error,
  });
}

export function foreign(path: string, why: string): StoreError {
  return new StoreError(
    "foreign",
    `${path} is not an isohook store (${why}). Nothing was changed. Pass --store <path> to use another file, or move this one away.`,
  );
}

export function corrupt(path: string, why: string): StoreError {
  return new StoreError(
    "corrupt",
    `The store at ${path} is damaged (${why}). Nothing was changed. Restore it from a backup, or move it away and upload the bundles again.`,
  );
}

function errorCode(error: unknown): string {
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "string")
    return error.code;
  return "";
}
