import type { Pool, PoolClient } from "pg";
import type { FailureReport, FleetQuarantine, QuarantineSettings } from "../../dispatch/index.js";
import type { BundleHash, TenantId } from "../../protocol/index.js";
import type { VersionAction } from "../bundle-store.js";
import { type QuarantineRow, toFleetQuarantine, toQuarantineRecord } from "../quarantine-rows.js";
import {
  checkReport,
  type FailureRow,
  inForce,
  nextQuarantine,
  notQuarantined,
  type QuarantineQuery,
  type QuarantineRecord,
  releaseDetail,
  type StoreQuarantine,
} from "../quarantine-rules.js";
import { checkTenantId, checkVersionAction } from "../store-inputs.js";
import type { PgCalls } from "./postgres-calls.js";
import type { SideChannel } from "./postgres-changes.js";
import type { PostgresQueries } from "./postgres-queries.js";

/** What the PostgreSQL store lends its quarantine book. */
export interface PgQuarantineDeps {
  readonly schema: string;
  readonly q: PostgresQueries;
  readonly pool: Pool;
  readonly calls: PgCalls;
  /** Starts the store's LISTEN connection (which carries this book's channel too). */
  readonly listen: () => Promise<void>;
  readonly clock: () => number;
}

/**
 * The PostgreSQL store's quarantine book, for a fleet: a report is one transaction under an advisory lock
 * on the bundle (hosts reporting at once are counted one after the other), and a new or released entry is
 * NOTIFYed on the store's quarantine channel on commit. Every host LISTENs on it beside its pick-up
 * channel; while that connection is down the entries changed since the last look are polled with the
 * store's generation (`SideChannel.resync`).
 */
export class PostgresQuarantine implements StoreQuarantine {
  readonly #d: PgQuarantineDeps;
  readonly #s: string;
  readonly #listeners = new Set<(entry: FleetQuarantine) => void>();
  readonly side: SideChannel;
  /** The newest `changed_at` seen; set when the first listener comes (the clock is not read before). */
  #cursor = Number.POSITIVE_INFINITY;
  #resyncing = false;

  constructor(deps: PgQuarantineDeps) {
    this.#d = deps;
    this.#s = `"${deps.schema}".`;
    this.side = {
      channel: `isohook-q:${deps.schema}`,
      notified: (payload) => this.#notified(payload),
      resync: () => void this.#resync(),
    };
  }

  async report(report: FailureReport, settings: QuarantineSettings): Promise<FleetQuarantine | undefined> {
    const { tenantId, bundleHash, host, failures } = checkReport(report);
    const s = this.#s;
    return this.#d.calls.write(undefined, async (c) => {
      await c.query("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", [
        this.side.channel,
        `${tenantId}/${bundleHash}`,
      ]);
      const now = this.#d.clock();
      const previous = await this.#entry(c, tenantId, bundleHash);
      if (inForce(previous, now)) return previous;
      await c.query(
        `INSERT INTO ${s}quarantine_failures (tenant_id, bundle_hash, at, host, code, weight)
           SELECT $1, $2, at, $3, code, weight FROM unnest($4::bigint[], $5::text[], $6::integer[]) AS f (at, code, weight)`,
        [
          tenantId,
          bundleHash,
          host,
          failures.map((f) => Math.round(f.at)),
          failures.map((f) => f.code),
          failures.map((f) => f.weight),
        ],
      );
      await c.query(`DELETE FROM ${s}quarantine_failures WHERE tenant_id = $1 AND bundle_hash = $2 AND at <= $3`, [
        tenantId,
        bundleHash,
        now - settings.windowMs,
      ]);
      const rows = await c.query<FailureRow>(
        `SELECT at::float8 AS at, host, code, weight FROM ${s}quarantine_failures WHERE tenant_id = $1 AND bundle_hash = $2`,
        [tenantId, bundleHash],
      );
      const entry = nextQuarantine({ tenantId, bundleHash }, previous, rows.rows, now, settings);
      if (entry === undefined) return undefined;
      await c.query(
        `INSERT INTO ${s}quarantines (tenant_id, bundle_hash, strike, since, until, failures, codes, hosts, changed_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $4)
         ON CONFLICT (tenant_id, bundle_hash) DO UPDATE SET strike = excluded.strike, since = excluded.since,
           until = excluded.until, failures = excluded.failures, codes = excluded.codes, hosts = excluded.hosts,
           released_at = NULL, released_by = NULL, changed_at = excluded.changed_at`,
        [
          tenantId,
          bundleHash,
          entry.strike,
          entry.since,
          entry.until,
          entry.failures,
          JSON.stringify(entry.codes),
          JSON.stringify(entry.hosts),
        ],
      );
      await c.query(`DELETE FROM ${s}quarantine_failures WHERE tenant_id = $1 AND bundle_hash = $2`, [
        tenantId,
        bundleHash,
      ]);
      await c.query("SELECT pg_notify($1, $2)", [this.side.channel, JSON.stringify(entry)]);
      return entry;
    });
  }

  watch(listener: (entry: FleetQuarantine) => void): () => void {
    this.#listeners.add(listener);
    if (this.#cursor === Number.POSITIVE_INFINITY) this.#cursor = this.#d.clock();
    void this.#d.listen().then(() => this.#resync(listener));
    return () => this.#listeners.delete(listener);
  }

  async list(query: QuarantineQuery = {}, signal?: AbortSignal): Promise<QuarantineRecord[]> {
    const tenantId = query.tenantId === undefined ? null : checkTenantId(query.tenantId);
    const now = this.#d.clock();
    const s = this.#s;
    const rows = await this.#d.calls.read(signal, () =>
      this.#d.pool.query<QuarantineRow>(
        `SELECT q.*, (SELECT string_agg(v.version::text, ',') FROM ${s}versions v
                       WHERE v.tenant_id = q.tenant_id AND v.bundle_hash = q.bundle_hash) AS versions
           FROM ${s}quarantines q
          WHERE ($1::text IS NULL OR q.tenant_id = $1) AND ($2 OR (q.until > $3 AND q.released_at IS NULL))
          ORDER BY q.since DESC`,
        [tenantId, query.all === true, now],
      ),
    );
    return rows.rows.map(toQuarantineRecord);
  }

  async release(input: VersionAction, signal?: AbortSignal): Promise<QuarantineRecord> {
    const { tenantId, version, by } = checkVersionAction(input);
    const hash = await this.#d.calls.write(signal, async (c) => {
      const hash = await this.#d.q.hashOf(c, tenantId, version);
      await c.query("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", [
        this.side.channel,
        `${tenantId}/${hash}`,
      ]);
      const now = this.#d.clock();
      const entry = await this.#entry(c, tenantId, hash);
      if (!inForce(entry, now)) throw notQuarantined(tenantId, version);
      const released = { ...entry, releasedAt: now, releasedBy: by };
      await c.query(
        `UPDATE ${this.#s}quarantines SET released_at = $3, released_by = $4, changed_at = $3
          WHERE tenant_id = $1 AND bundle_hash = $2`,
        [tenantId, hash, now, by],
      );
      await c.query(`DELETE FROM ${this.#s}quarantine_failures WHERE tenant_id = $1 AND bundle_hash = $2`, [
        tenantId,
        hash,
      ]);
      await this.#d.q.writeAudit(c, new Date(now), tenantId, "release", version, null, hash, by, releaseDetail(entry));
      await c.query("SELECT pg_notify($1, $2)", [this.side.channel, JSON.stringify(released)]);
      return hash;
    });
    const record = (await this.list({ tenantId, all: true }, signal)).find((r) => r.bundleHash === hash);
    if (record === undefined) throw notQuarantined(tenantId, version);
    return record;
  }

  async #entry(c: PoolClient, tenantId: TenantId, hash: BundleHash): Promise<FleetQuarantine | undefined> {
    const result = await c.query<QuarantineRow>(
      `SELECT * FROM ${this.#s}quarantines WHERE tenant_id = $1 AND bundle_hash = $2`,
      [tenantId, hash],
    );
    const row = result.rows[0];
    return row && toFleetQuarantine(row);
  }

  #notified(payload: string): void {
    let entry: FleetQuarantine;
    try {
      entry = JSON.parse(payload) as FleetQuarantine;
    } catch {
      return;
    }
    for (const listener of this.#listeners) listener(entry);
  }

  /** Re-reads the entries in force and those changed since the last look: notifications may have been missed. */
  async #resync(only?: (entry: FleetQuarantine) => void): Promise<void> {
    if (this.#listeners.size === 0 || (this.#resyncing && only === undefined)) return;
    if (only === undefined) this.#resyncing = true;
    try {
      const now = this.#d.clock();
      const rows = await this.#d.pool.query<QuarantineRow>(
        `SELECT * FROM ${this.#s}quarantines WHERE (until > $1 AND released_at IS NULL) OR changed_at >= $2`,
        [now, this.#cursor],
      );
      for (const row of rows.rows) {
        this.#cursor = Math.max(this.#cursor, Number(row.changed_at));
        const entry = toFleetQuarantine(row);
        for (const listener of only === undefined ? this.#listeners : [only]) listener(entry);
      }
    } catch {
      // Unreachable: the next poll or reconnection tries again.
    } finally {
      if (only === undefined) this.#resyncing = false;
    }
  }
}
