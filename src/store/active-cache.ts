import type { ActiveBundle, BundleHash, BundleManifest, JsonValue, TenantId } from "../protocol/index.js";
import { StoreError } from "./errors.js";
import { type StoreEvent, StoreHealth } from "./store-health.js";

/** One stored version as the cache needs it, without the bundle's code. */
export interface HeadVersion {
  readonly version: number;
  readonly hash: BundleHash;
  readonly config: JsonValue;
}

/** A tenant's active version with its rollout and shadow candidates, read together in one query. */
export interface ActiveHead extends HeadVersion {
  readonly rollout?: HeadVersion & { readonly percent: number };
  readonly shadow?: HeadVersion;
}

export interface CachedCode {
  readonly code: string;
  /** Maps a failure's stack to the author's files (`index.ts:12:7`); null for a bundle stored without one. */
  readonly sourceMap: string | null;
  readonly manifest: BundleManifest;
  /** The bundle's size: the cache counts it, plus the source map's length, against `maxCachedBytes`. */
  readonly bytes: number;
}

type MaybePromise<T> = T | Promise<T>;

/** The reads the cache needs from a store: synchronous for memory and SQLite, asynchronous for PostgreSQL. */
export interface ActiveReader {
  /**
   * A cheap value that changes whenever another process may have committed to the store (SQLite's
   * `data_version`), checked at most every `refreshMs`. Stores that are told of changes (PostgreSQL's
   * LISTEN/NOTIFY) have none and call `invalidate` instead.
   */
  readonly changeToken?: () => number;
  head(tenantId: TenantId): MaybePromise<ActiveHead | undefined>;
  code(hash: BundleHash): MaybePromise<CachedCode | undefined>;
  /**
   * The head with, in one round trip, the code of its versions whose hash is not in `known` (a store
   * across a network has it; `head` and `code` serve the others).
   */
  headAndCode?(tenantId: TenantId, known: readonly BundleHash[]): Promise<HeadAndCode | undefined>;
}

export interface HeadAndCode {
  readonly head: ActiveHead;
  readonly code: ReadonlyMap<BundleHash, CachedCode>;
}

/** How many of the most recently used hashes a combined head read names as known. */
const KNOWN_HASHES = 64;

export interface ActiveCacheOptions {
  /**
   * How stale an answer may be when another process activates or rolls back: default 500 ms. SQLite
   * checks for changes this often; PostgreSQL is notified at once and polls this often only while its
   * notification connection is down.
   */
  readonly refreshMs?: number;
  /** Bundle code kept by hash, in bytes: default 64 MiB (least recently used beyond). */
  readonly maxCachedBytes?: number;
  /** The store's reachability changes (`store.unreachable`, `store.reachable`). */
  readonly onEvent?: (event: StoreEvent) => void;
  readonly now?: () => number;
}

interface Head {
  readonly bundle: ActiveBundle | undefined;
  stale: boolean;
}

interface Loading {
  promise?: Promise<ActiveBundle | undefined>;
  /** Loads are numbered: one that ends after a later one began does not overwrite what that one stores. */
  readonly seq: number;
  /**
   * Set when the head is invalidated while being read: its callers get the answer, stored stale; a later
   * `get` does not join it but reads again (a store's own write must be seen by the next `active`).
   */
  invalidated: boolean;
}

/**
 * Serves `BundleSource.active` from memory, the one pick-up mechanism of every store. A head (tenant →
 * version, hash, config) is served until it is invalidated: by the store's own writes, by a change
 * notification (PostgreSQL), or when the reader's change token moves (SQLite, checked at most every
 * `refreshMs`). An invalidated head is kept, marked stale, and re-read on its next use; while the store
 * is unreachable the stale head is served instead (and re-read in the background at most every
 * `refreshMs`; the first read that succeeds makes the store reachable again), so a run never fails for a
 * bundle the host already knew. Code is cached by hash and never goes stale: bundles are immutable.
 */
export class ActiveBundleCache {
  readonly health: StoreHealth;
  readonly refreshMs: number;
  readonly #reader: ActiveReader;
  readonly #maxCachedBytes: number;
  readonly #now: () => number;
  readonly #heads = new Map<TenantId, Head>();
  readonly #loading = new Map<TenantId, Loading>();
  readonly #code = new Map<BundleHash, CachedCode>();
  #cachedBytes = 0;
  #checkedAt = Number.NEGATIVE_INFINITY;
  #retriedAt = Number.NEGATIVE_INFINITY;
  #token: number | undefined;
  #seq = 0;
  /** The seq of the load whose head each tenant's entry holds. */
  readonly #storedSeq = new Map<TenantId, number>();

  constructor(reader: ActiveReader, options: ActiveCacheOptions = {}) {
    this.#reader = reader;
    this.refreshMs = integerOption("refreshMs", options.refreshMs ?? 500, 0, 3_600_000);
    this.#maxCachedBytes = integerOption("maxCachedBytes", options.maxCachedBytes ?? 64 * 1024 * 1024, 0, 2 ** 40);
    this.#now = options.now ?? (() => performance.now());
    this.health = new StoreHealth(options.onEvent);
  }

  /** The tenant's active bundle: synchronous when cached and fresh (the hot path), else one read. */
  get(tenantId: TenantId): ActiveBundle | undefined | Promise<ActiveBundle | undefined> {
    this.#checkToken();
    const head = this.#heads.get(tenantId);
    if (head && !head.stale) return head.bundle;
    if (head && !this.health.reachable) {
      // Serve the last known version at once; try the store again in the background, once per refreshMs.
      const now = this.#now();
      if (now - this.#retriedAt >= this.refreshMs) {
        this.#retriedAt = now;
        this.#read(tenantId, head).catch(() => undefined);
      }
      return head.bundle;
    }
    return this.#read(tenantId, head);
  }

  /** Marks one tenant's head stale, or every head (not code: code by hash cannot change). */
  invalidate(tenantId?: TenantId): void {
    if (tenantId === undefined) {
      for (const head of this.#heads.values()) head.stale = true;
      for (const loading of this.#loading.values()) loading.invalidated = true;
      return;
    }
    const head = this.#heads.get(tenantId);
    if (head) head.stale = true;
    const loading = this.#loading.get(tenantId);
    if (loading) loading.invalidated = true;
  }

  /**
   * Marks the tenant's head stale and, when this host has served the tenant before, re-reads it at once,
   * so the next run finds it fresh. A failed re-read is left for the next `get` to handle.
   */
  refresh(tenantId: TenantId): void {
    this.invalidate(tenantId);
    if (!this.#heads.has(tenantId)) return;
    const served = this.get(tenantId);
    if (served instanceof Promise) served.catch(() => undefined);
  }

  /**
   * Serves a head a change notification carried, without a read, when this host has served the tenant
   * and has the code of each of its versions (code is immutable by hash); otherwise as `refresh`.
   */
  apply(tenantId: TenantId, head: ActiveHead): void {
    const hashes = [head.hash, head.rollout?.hash, head.shadow?.hash];
    if (!this.#heads.has(tenantId) || !hashes.every((h) => h === undefined || this.#code.has(h))) {
      this.refresh(tenantId);
      return;
    }
    const served = this.#read(tenantId, this.#heads.get(tenantId), head);
    served.catch(() => undefined);
  }

  #read(tenantId: TenantId, head: Head | undefined, given?: ActiveHead): Promise<ActiveBundle | undefined> {
    const loading = this.#loading.get(tenantId);
    // A read invalidated while in flight began before a change this caller may have made: read again.
    if (given === undefined && loading?.promise && !loading.invalidated) return loading.promise;
    if (loading !== undefined) loading.invalidated = true;
    const entry: Loading = { invalidated: false, seq: ++this.#seq };
    this.#loading.set(tenantId, entry);
    entry.promise = this.#load(tenantId, head, entry, given);
    return entry.promise;
  }

  #checkToken(): void {
    const changeToken = this.#reader.changeToken;
    if (!changeToken) return;
    const now = this.#now();
    if (now - this.#checkedAt < this.refreshMs) return;
    this.#checkedAt = now;
    const token = changeToken();
    if (token !== this.#token) {
      this.#token = token;
      this.invalidate();
    }
  }

  async #load(
    tenantId: TenantId,
    previous: Head | undefined,
    entry: Loading,
    given: ActiveHead | undefined,
  ): Promise<ActiveBundle | undefined> {
    try {
      const head = given ?? (await this.#headOf(tenantId));
      const bundle = head && (await this.#bundleOf(tenantId, head));
      if ((this.#storedSeq.get(tenantId) ?? 0) < entry.seq) {
        this.#storedSeq.set(tenantId, entry.seq);
        this.#heads.set(tenantId, { bundle, stale: entry.invalidated });
      }
      if (given === undefined) this.health.restored();
      return bundle;
    } catch (error) {
      if (!(error instanceof StoreError && error.code === "unavailable")) throw error;
      this.health.lost(error.message);
      this.#retriedAt = this.#now();
      if (previous) return previous.bundle;
      throw error;
    } finally {
      if (this.#loading.get(tenantId) === entry) this.#loading.delete(tenantId);
    }
  }

  async #headOf(tenantId: TenantId): Promise<ActiveHead | undefined> {
    if (this.#reader.headAndCode === undefined) return this.#reader.head(tenantId);
    const known = [...this.#code.keys()].slice(-KNOWN_HASHES);
    const read = await this.#reader.headAndCode(tenantId, known);
    for (const [hash, code] of read?.code ?? []) this.#keep(hash, code);
    return read?.head;
  }

  async #bundleOf(tenantId: TenantId, head: ActiveHead): Promise<ActiveBundle | undefined> {
    const active = await this.#versionOf(tenantId, head);
    if (!active || (head.rollout === undefined && head.shadow === undefined)) return active;
    const rollout = head.rollout && (await this.#versionOf(tenantId, head.rollout));
    const shadow = head.shadow && (await this.#versionOf(tenantId, head.shadow));
    return Object.freeze({
      ...active,
      ...(rollout && head.rollout
        ? { rollout: Object.freeze({ bundle: rollout, percent: head.rollout.percent }) }
        : {}),
      ...(shadow ? { shadow } : {}),
    });
  }

  async #versionOf(tenantId: TenantId, head: HeadVersion): Promise<ActiveBundle | undefined> {
    const cached = await this.#codeOf(head.hash);
    if (!cached) return undefined;
    return Object.freeze({
      tenantId,
      version: head.version,
      code: cached.code,
      ...(cached.sourceMap === null ? {} : { sourceMap: cached.sourceMap }),
      manifest: cached.manifest,
      config: head.config,
    });
  }

  async #codeOf(hash: BundleHash): Promise<CachedCode | undefined> {
    const hit = this.#code.get(hash);
    if (hit) {
      // Re-insert: Map order is the LRU order.
      this.#code.delete(hash);
      this.#code.set(hash, hit);
      return hit;
    }
    const loaded = await this.#reader.code(hash);
    if (loaded) this.#keep(hash, loaded);
    return loaded;
  }

  #keep(hash: BundleHash, loaded: CachedCode): void {
    if (this.#code.has(hash)) return;
    this.#code.set(hash, loaded);
    this.#cachedBytes += cost(loaded);
    for (const [oldHash, old] of this.#code) {
      if (this.#cachedBytes <= this.#maxCachedBytes || oldHash === hash) break;
      this.#code.delete(oldHash);
      this.#cachedBytes -= cost(old);
    }
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

/** What a cached bundle weighs against `maxCachedBytes`: its code and its source map. */
function cost(cached: CachedCode): number {
  return cached.bytes + (cached.sourceMap?.length ?? 0);
}
