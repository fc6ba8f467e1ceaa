import type { PoolClient } from "pg";
import { StoreError } from "../errors.js";
import type { PgConnections } from "./postgres-connections.js";
import { pgStoreError } from "./postgres-errors.js";

/** How the PostgreSQL store and its parts call the database: closed and abort checks, errors as `StoreError`s. */
export class PgCalls {
  readonly #db: PgConnections;
  readonly #location: string;
  #closed = false;

  constructor(db: PgConnections, location: string) {
    this.#db = db;
    this.#location = location;
  }

  get closed(): boolean {
    return this.#closed;
  }

  close(): void {
    this.#closed = true;
  }

  open(signal: AbortSignal | undefined): void {
    signal?.throwIfAborted();
    if (this.#closed) throw new StoreError("closed", "The store is closed: open it again.");
  }

  /** One read through the pool, retried once on a dropped connection (a pooled connection may have died idle). */
  async read<T>(signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    this.open(signal);
    try {
      return await fn();
    } catch (first) {
      const error = pgStoreError(first, this.#location);
      if (error.code !== "unavailable" || this.#closed) throw error;
      try {
        return await fn();
      } catch (second) {
        throw pgStoreError(second, this.#location);
      }
    }
  }

  /** One statement on one pooled connection, in a transaction of its own (autocommit), never retried. */
  statement<T>(signal: AbortSignal | undefined, fn: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.#once(signal, () => this.#db.withClient(fn));
  }

  /** One transaction on one pooled connection. */
  write<T>(signal: AbortSignal | undefined, fn: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.#once(signal, () => this.#db.transaction(fn));
  }

  async #once<T>(signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    this.open(signal);
    try {
      return await call();
    } catch (error) {
      throw pgStoreError(error, this.#location);
    }
  }
}
