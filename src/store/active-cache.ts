import type { ActiveBundle, BundleHash, BundleManifest, JsonValue, TenantId } from "../protocol/index.js";
import { StoreError } from "./errors.js";

/** A tenant's active version as the store records it, without the bundle's code. */
export interface ActiveHead {
  readonly version: number;
  readonly hash: BundleHash;
  readonly config: JsonValue;
}

export interface CachedCode {
  readonly code: string;
  readonly manifest: BundleManifest;
  readonly bytes: number;
}

/** The reads the cache needs from a store. All synchronous: both stores answer from memory or SQLite. */
export interface ActiveReader {
  /** A value that changes whenever another process may have committed to the store. */
  changeToken(): number;
  head(tenantId: TenantId): ActiveHead | undefined;
  code(hash: BundleHash): CachedCode | undefined;
}

export interface ActiveCacheOptions {
  /** How stale an answer may be when another process activates or rolls back: default 500 ms. */
  readonly refreshMs?: number;
  /** Bundle code kept by hash, in bytes: default 64 MiB (least recently used beyond). */
  readonly maxCachedBytes?: number;
  readonly now?: () => number;
}

/**
 * Serves `BundleSource.active` from memory. Heads (tenant → version, hash, config) are trusted until the
 * reader's change token moves, which is checked at most every `refreshMs`; the store's own writes call
 * `invalidate()` so they show at once. Code is cached by hash and never goes stale: bundles are immutable.
 */
export class ActiveBundleCache {
  readonly #reader: ActiveReader;
  readonly #refreshMs: number;
  readonly #maxCachedBytes: number;
  readonly #now: () => number;
  readonly #heads = new Map<TenantId, ActiveBundle | undefined>();
  readonly #code = new Map<BundleHash, CachedCode>();
  #cachedBytes = 0;
  #checkedAt = Number.NEGATIVE_INFINITY;
  #token: number | undefined;

  constructor(reader: ActiveReader, options: ActiveCacheOptions = {}) {
    this.#reader = reader;
    this.#refreshMs = integerOption("refreshMs", options.refreshMs ?? 500, 0, 3_600_000);
    this.#maxCachedBytes = integerOption("maxCachedBytes", options.maxCachedBytes ?? 64 * 1024 * 1024, 0, 2 ** 40);
    this.#now = options.now ?? (() => performance.now());
  }

  get(tenantId: TenantId): ActiveBundle | undefined {
    const now = this.#now();
    if (now - this.#checkedAt >= this.#refreshMs) {
      this.#checkedAt = now;
      const token = this.#reader.changeToken();
      if (token !== this.#token) {
        this.#token = token;
        this.#heads.clear();
      }
    }
    if (this.#heads.has(tenantId)) return this.#heads.get(tenantId);
    const active = this.#load(tenantId);
    this.#heads.set(tenantId, active);
    return active;
  }

  /** Forgets every head (not code: code by hash cannot change). Called after the store's own writes. */
  invalidate(): void {
    this.#heads.clear();
  }

  #load(tenantId: TenantId): ActiveBundle | undefined {
    const head = this.#reader.head(tenantId);
    if (!head) return undefined;
    const cached = this.#codeOf(head.hash);
    if (!cached) return undefined;
    return Object.freeze({
      tenantId,
      version: head.version,
      code: cached.code,
      manifest: cached.manifest,
      config: head.config,
    });
  }

  #codeOf(hash: BundleHash): CachedCode | undefined {
    const hit = this.#code.get(hash);
    if (hit) {
      // Re-insert: Map order is the LRU order.
      this.#code.delete(hash);
      this.#code.set(hash, hit);
      return hit;
    }
    const loaded = this.#reader.code(hash);
    if (!loaded) return undefined;
    this.#code.set(hash, loaded);
    this.#cachedBytes += loaded.bytes;
    for (const [oldHash, old] of this.#code) {
      if (this.#cachedBytes <= this.#maxCachedBytes || oldHash === hash) break;
      this.#code.delete(oldHash);
      this.#cachedBytes -= old.bytes;
    }
    return loaded;
  }
}

/** Validates a numeric option with the house message format. */
export function integerOption(name: string, value: unknown, min: number, max: number): number {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= min && value <= max) return value;
  throw new StoreError(
    "invalid_input",
    `Expected \`${name}\` to be an integer from ${min} to ${max}, got \`${String(value)}\``,
  );
}
