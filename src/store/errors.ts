/** Why a store operation failed. Every code's message says what to do next. */
export type StoreErrorCode =
  /** A tenant id outside the safe alphabet (see TenantId). */
  | "invalid_tenant"
  /** A version that is not a positive integer. */
  | "invalid_version"
  /** Any other rejected input: manifest, hash, uploader, config, sizes. */
  | "invalid_input"
  /** The tenant or version does not exist. */
  | "not_found"
  /** A rollback with no earlier activation to return to. */
  | "no_previous"
  /** Deleting, rolling out or shadowing the version that is active. */
  | "active_version"
  /** Deleting a version that is rolled out or in shadow mode. */
  | "in_use"
  /** Rolling out or shadowing for a tenant with no active version. */
  | "no_active"
  /** No store at the location (no file, no schema) and creating one was not asked for. */
  | "missing"
  /** Not an isohook store: not SQLite, another application's SQLite file, or a PostgreSQL schema holding other tables. */
  | "foreign"
  /** An isohook store that fails its integrity check or holds rows that do not validate. */
  | "corrupt"
  /** The store's -wal, -shm or -journal file is a symbolic link or not a regular file: SQLite would write through it. */
  | "unsafe_companion"
  /** A store written by a newer isohook: its schema is unknown to this version. */
  | "newer_schema"
  /** The store's path or file cannot be written. */
  | "read_only"
  /** The disk (or the store's configured size cap) is full. */
  | "full"
  /** Another process held the store's write lock for longer than the busy timeout. */
  | "busy"
  /** The database server cannot be reached (PostgreSQL): down, refusing connections, or the connection dropped. */
  | "unavailable"
  /** The store was closed. */
  | "closed"
  /** Any other I/O failure. */
  | "io";

/** A store failure with a `code` and a message that says what to do next. */
export class StoreError extends Error {
  readonly code: StoreErrorCode;
  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreError";
    this.code = code;
  }
}
