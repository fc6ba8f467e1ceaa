import type { Client } from "pg";
import type { TenantId } from "../../protocol/index.js";
import type { ActiveBundleCache } from "../active-cache.js";
import { endClient } from "./postgres-connections.js";
import { headChannelOf, readChange } from "./postgres-head.js";

export interface ChangeFeedOptions {
  /** Opens a dedicated connection (never a pooled one: LISTEN is per session). */
  readonly connect: () => Promise<Client>;
  readonly channel: string;
  /** Reads `store_state.generation` through the pool. */
  readonly generation: () => Promise<number>;
  readonly cache: ActiveBundleCache;
  /** How often the listening connection is checked with a query: a silently dead one is replaced. */
  readonly heartbeatMs: number;
  /** A second channel on the same connection (quarantine): its notifications, and a re-read after any gap. */
  readonly also?: SideChannel;
}

export interface SideChannel {
  readonly channel: string;
  notified(payload: string): void;
  /** Called when listening (re)starts and on every poll while it is down: notifications may have been missed. */
  resync(): void;
}

/**
 * Live pick-up for the PostgreSQL store. One connection per store LISTENs on the store's head channel and
 * its channel (`notifyHeadSql`); each head notification, sent on commit by the transaction that changed a
 * tenant's head, carries that head (its
 * versions, hashes and configs, not code): a host that has served the tenant and has the code of those
 * versions serves it at once, with no read; otherwise (code it has not cached, or a head too large for a
 * payload, which then names the tenant only) the head is re-read at once. When the connection drops, it is re-opened at once and then every
 * `refreshMs`; meanwhile the store's generation is polled every `refreshMs` and every head is marked
 * stale when it moves. A re-opened connection marks every head stale too, since notifications may have
 * been missed. Whether the database answers is reported through the cache's health.
 */
export class PgChangeFeed {
  readonly #o: ChangeFeedOptions;
  #client: Client | undefined;
  #started: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #generation: number | undefined;
  #ticking = false;
  #tickAgain = false;
  #closed = false;
  readonly #headChannel: string;
  /** The tenant of the last head notified: its bare-id notification that follows needs no read. */
  #lastHeadOf: TenantId | undefined;

  constructor(options: ChangeFeedOptions) {
    this.#o = options;
    this.#headChannel = headChannelOf(options.channel);
  }

  /** True while the notification connection is up. */
  get listening(): boolean {
    return this.#client !== undefined;
  }

  /** Starts listening, once: resolves when listening, or when it failed and polling took over. */
  start(): Promise<void> {
    this.#started ??= this.#tick();
    return this.#started;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    if (client) await endClient(client);
  }

  async #tick(): Promise<void> {
    if (this.#closed) return;
    if (this.#ticking) {
      this.#tickAgain = true;
      return;
    }
    this.#ticking = true;
    try {
      if (await this.#listen()) return;
      try {
        const generation = await this.#o.generation();
        if (generation !== this.#generation) {
          this.#generation = generation;
          this.#o.cache.invalidate();
        }
        this.#o.cache.health.restored();
        this.#o.also?.resync();
      } catch (error) {
        this.#o.cache.health.lost(reasonOf(error));
      }
      this.#schedule(() => void this.#tick(), this.#o.cache.refreshMs);
    } finally {
      this.#ticking = false;
      if (this.#tickAgain) {
        this.#tickAgain = false;
        if (!this.#client) void this.#tick();
      }
    }
  }

  async #listen(): Promise<boolean> {
    let client: Client | undefined;
    try {
      client = await this.#o.connect();
      const self = client;
      client.on("notification", (n) => {
        if (n.channel === this.#headChannel && n.payload) this.#changed(n.payload);
        else if (n.channel === this.#o.channel && n.payload) this.#named(n.payload);
        else if (n.channel === this.#o.also?.channel && n.payload) this.#o.also.notified(n.payload);
      });
      client.on("error", () => this.#lost(self));
      client.on("end", () => this.#lost(self));
      await client.query(`LISTEN "${this.#headChannel}"`);
      await client.query(`LISTEN "${this.#o.channel}"`);
      if (this.#o.also) await client.query(`LISTEN "${this.#o.also.channel}"`);
    } catch {
      if (client) void endClient(client);
      return false;
    }
    if (this.#closed) {
      await endClient(client);
      return true;
    }
    this.#client = client;
    this.#generation = undefined;
    this.#o.cache.invalidate();
    this.#o.cache.health.restored();
    this.#o.also?.resync();
    this.#schedule(() => void this.#heartbeat(), this.#o.heartbeatMs);
    return true;
  }

  /** A head that came with its notification is served without a read when this host has its code. */
  #changed(payload: string): void {
    const change = readChange(payload);
    this.#lastHeadOf = change?.tenantId;
    if (change === undefined) this.#o.cache.invalidate();
    else if (change.head === undefined) this.#o.cache.refresh(change.tenantId);
    else this.#o.cache.apply(change.tenantId, change.head);
  }

  /**
   * A change named on the store's channel: the second notification of a change whose head just came (the
   * same transaction sends both, one after the other), or the only one, from a writer of an earlier release.
   */
  #named(tenantId: string): void {
    const had = this.#lastHeadOf === tenantId;
    this.#lastHeadOf = undefined;
    if (!had) this.#o.cache.refresh(tenantId as TenantId);
  }

  async #heartbeat(): Promise<void> {
    const client = this.#client;
    if (!client) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("heartbeat timed out")), this.#o.heartbeatMs);
    });
    try {
      await Promise.race([client.query("SELECT 1"), timeout]);
      if (this.#client === client) this.#schedule(() => void this.#heartbeat(), this.#o.heartbeatMs);
    } catch {
      void endClient(client);
      this.#lost(client);
    } finally {
      clearTimeout(timer);
    }
  }

  #lost(client: Client): void {
    if (client !== this.#client) return;
    this.#client = undefined;
    clearTimeout(this.#timer);
    void this.#tick();
  }

  #schedule(fn: () => void, ms: number): void {
    clearTimeout(this.#timer);
    if (this.#closed) return;
    this.#timer = setTimeout(fn, ms);
    this.#timer.unref();
  }
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
