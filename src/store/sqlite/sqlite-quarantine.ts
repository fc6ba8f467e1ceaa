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
import type { SqliteDatabase } from "./open-database.js";
import type { SqliteGuard } from "./sqlite-checkpoints.js";
import type { SqliteQueries } from "./sqlite-queries.js";

/**
 * The SQLite store's quarantine book, for processes sharing one file: a report is one `BEGIN IMMEDIATE`
 * transaction (the file's write lock orders the hosts), and `watch` polls the entries changed since its
 * last look every `refreshMs`.
 */
export class SqliteQuarantine implements StoreQuarantine {
  readonly #db: SqliteDatabase;
  readonly #q: SqliteQueries;
  readonly #guard: SqliteGuard;
  readonly #clock: () => number;
  readonly #refreshMs: number;
  readonly #listeners = new Set<(entry: FleetQuarantine) => void>();
  #timer: NodeJS.Timeout | undefined;
  #cursor = 0;

  constructor(db: SqliteDatabase, q: SqliteQueries, guard: SqliteGuard, clock: () => number, refreshMs: number) {
    this.#db = db;
    this.#q = q;
    this.#guard = guard;
    this.#clock = clock;
    this.#refreshMs = refreshMs;
  }

  async report(report: FailureReport, settings: QuarantineSettings): Promise<FleetQuarantine | undefined> {
    const { tenantId, bundleHash, host, failures } = checkReport(report);
    const now = this.#clock();
    const write = this.#db.transaction(() => {
      const previous = this.#entry(tenantId, bundleHash);
      if (inForce(previous, now)) return previous;
      const insert = this.#db.prepare(
        "INSERT INTO quarantine_failures (tenant_id, bundle_hash, at, host, code, weight) VALUES (?, ?, ?, ?, ?, ?)",
      );
      for (const f of failures) insert.run(tenantId, bundleHash, Math.round(f.at), host, f.code, f.weight);
      this.#db
        .prepare("DELETE FROM quarantine_failures WHERE tenant_id = ? AND bundle_hash = ? AND at <= ?")
        .run(tenantId, bundleHash, now - settings.windowMs);
      const rows = this.#db
        .prepare("SELECT at, host, code, weight FROM quarantine_failures WHERE tenant_id = ? AND bundle_hash = ?")
        .all(tenantId, bundleHash) as FailureRow[];
      const entry = nextQuarantine({ tenantId, bundleHash }, previous, rows, now, settings);
      if (entry === undefined) return undefined;
      this.#db
        .prepare(
          `INSERT INTO quarantines (tenant_id, bundle_hash, strike, since, until, failures, codes, hosts, released_at, released_by, changed_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)
           ON CONFLICT (tenant_id, bundle_hash) DO UPDATE SET strike = excluded.strike, since = excluded.since,
             until = excluded.until, failures = excluded.failures, codes = excluded.codes, hosts = excluded.hosts,
             released_at = NULL, released_by = NULL, changed_at = excluded.changed_at`,
        )
        .run(
          tenantId,
          bundleHash,
          entry.strike,
          entry.since,
          entry.until,
          entry.failures,
          JSON.stringify(entry.codes),
          JSON.stringify(entry.hosts),
          now,
        );
      this.#db
        .prepare("DELETE FROM quarantine_failures WHERE tenant_id = ? AND bundle_hash = ?")
        .run(tenantId, bundleHash);
      return entry;
    });
    return this.#guard(undefined, () => write.immediate());
  }

  watch(listener: (entry: FleetQuarantine) => void): () => void {
    this.#listeners.add(listener);
    const now = this.#clock();
    const rows = this.#guard(undefined, () => this.#rows("until > ? AND released_at IS NULL", now));
    for (const row of rows) listener(toFleetQuarantine(row));
    if (this.#timer === undefined) {
      this.#cursor = Math.max(this.#cursor, now);
      this.#timer = setInterval(() => this.#poll(), this.#refreshMs);
      this.#timer.unref();
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async list(query: QuarantineQuery = {}, signal?: AbortSignal): Promise<QuarantineRecord[]> {
    const tenantId = query.tenantId === undefined ? null : checkTenantId(query.tenantId);
    const now = this.#clock();
    return this.#guard(
      signal,
      () =>
        this.#db
          .prepare(
            `SELECT q.*, (SELECT group_concat(v.version) FROM versions v
                         WHERE v.tenant_id = q.tenant_id AND v.bundle_hash = q.bundle_hash) AS versions
             FROM quarantines q
            WHERE (? IS NULL OR q.tenant_id = ?) AND (? OR (q.until > ? AND q.released_at IS NULL))
            ORDER BY q.since DESC`,
          )
          .all(tenantId, tenantId, query.all === true ? 1 : 0, now) as QuarantineRow[],
    ).map(toQuarantineRecord);
  }

  async release(input: VersionAction, signal?: AbortSignal): Promise<QuarantineRecord> {
    const { tenantId, version, by } = checkVersionAction(input);
    const now = this.#clock();
    const write = this.#db.transaction(() => {
      const hash = this.#q.hashOf(tenantId, version);
      const entry = this.#entry(tenantId, hash);
      if (!inForce(entry, now)) throw notQuarantined(tenantId, version);
      this.#db
        .prepare(
          "UPDATE quarantines SET released_at = ?, released_by = ?, changed_at = ? WHERE tenant_id = ? AND bundle_hash = ?",
        )
        .run(now, by, now, tenantId, hash);
      this.#db.prepare("DELETE FROM quarantine_failures WHERE tenant_id = ? AND bundle_hash = ?").run(tenantId, hash);
      this.#q.writeAudit(now, tenantId, "release", version, null, hash, by, releaseDetail(entry));
      return hash;
    });
    const hash = this.#guard(signal, () => write.immediate());
    const [released] = await this.list({ tenantId, all: true }, signal).then((all) =>
      all.filter((r) => r.bundleHash === hash),
    );
    if (released === undefined) throw notQuarantined(tenantId, version);
    return released;
  }

  #entry(tenantId: TenantId, hash: BundleHash): FleetQuarantine | undefined {
    const row = this.#db
      .prepare("SELECT * FROM quarantines WHERE tenant_id = ? AND bundle_hash = ?")
      .get(tenantId, hash) as QuarantineRow | undefined;
    return row && toFleetQuarantine(row);
  }

  #rows(where: string, value: number): QuarantineRow[] {
    return this.#db.prepare(`SELECT * FROM quarantines WHERE ${where}`).all(value) as QuarantineRow[];
  }

  #poll(): void {
    let rows: QuarantineRow[];
    try {
      rows = this.#rows("changed_at >= ?", this.#cursor);
    } catch {
      return;
    }
    for (const row of rows) {
      this.#cursor = Math.max(this.#cursor, Number(row.changed_at));
      for (const listener of this.#listeners) listener(toFleetQuarantine(row));
    }
  }
}
