import type { Pool, PoolClient } from "pg";
import type { TenantId } from "../../protocol/index.js";
import {
  type DecisionQuery,
  type DecisionRow,
  describeLogSettings,
  type LogSettingsChange,
  type LogSettingsInput,
  type PruneInput,
  readLogSettings,
  type StoredDecision,
  type TenantLogSettings,
} from "../decision-log-store.js";
import { type DecisionDbRow, toStoredDecision } from "../sqlite/sqlite-decision-log.js";

type Db = Pool | PoolClient;

const ms = (column: string) => `(extract(epoch FROM ${column}) * 1000)::bigint`;

/** The PostgreSQL store's decision-log statements (inputs checked by the caller; parameters only). */
export class PostgresDecisionLog {
  readonly #s: string;

  /** `at` goes as ms since the epoch (a number is cheaper to send than a Date the driver formats). */
  readonly #append: string;

  constructor(schema: string) {
    this.#s = `"${schema}".`;
    this.#append = `INSERT INTO ${this.#s}decisions (tenant_id, at, run_id, turn, point, version, bundle_hash, event, event_chars,
       truncated, ctx, record, shadow)
     SELECT t, to_timestamp(a / 1000.0), r, tu, p, v, h, e, ec, tr, c, rec, sh
       FROM unnest($1::text[], $2::float8[], $3::text[], $4::int[], $5::text[], $6::bigint[], $7::text[], $8::text[],
                   $9::int[], $10::bool[], $11::text[], $12::text[], $13::text[]) AS u (t, a, r, tu, p, v, h, e, ec, tr, c, rec, sh)`;
  }

  async logSettings(db: Db, tenantId: TenantId | undefined): Promise<TenantLogSettings[]> {
    const result = await db.query<{ tenant_id: TenantId; settings: string; updated_at: number; updated_by: string }>(
      `SELECT tenant_id, settings, ${ms("updated_at")} AS updated_at, updated_by FROM ${this.#s}decision_log_settings
         WHERE $1::text IS NULL OR tenant_id = $1 ORDER BY tenant_id COLLATE "C"`,
      [tenantId ?? null],
    );
    return result.rows.map((row) => ({
      tenantId: row.tenant_id,
      ...readLogSettings(row.settings, row.tenant_id),
      updatedAt: new Date(row.updated_at).toISOString(),
      updatedBy: row.updated_by,
    }));
  }

  /** Inside the caller's transaction; the settings row is locked first so concurrent changes audit in order. */
  async setLogSettings(c: PoolClient, input: LogSettingsInput, at: Date): Promise<LogSettingsChange> {
    const { tenantId, settings, by } = input;
    const s = this.#s;
    const found = await c.query<{ settings: string }>(
      `SELECT settings FROM ${s}decision_log_settings WHERE tenant_id = $1 FOR UPDATE`,
      [tenantId],
    );
    const row = found.rows[0];
    const previous = row === undefined ? null : readLogSettings(row.settings, tenantId);
    if (settings === null) {
      await c.query(`DELETE FROM ${s}decision_log_settings WHERE tenant_id = $1`, [tenantId]);
    } else {
      await c.query(
        `INSERT INTO ${s}decision_log_settings (tenant_id, settings, updated_at, updated_by) VALUES ($1, $2, $3, $4)
           ON CONFLICT (tenant_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at,
           updated_by = excluded.updated_by`,
        [tenantId, JSON.stringify(settings), at, by],
      );
    }
    await c.query(`INSERT INTO ${s}audit (at, tenant_id, type, by, detail) VALUES ($1, $2, 'log', $3, $4)`, [
      at,
      tenantId,
      by,
      describeLogSettings(settings),
    ]);
    return { tenantId, settings, previous };
  }

  /**
   * One statement per batch, whatever its size: each column goes as one array parameter and `unnest` turns
   * them into rows, so the server parses 13 parameters, not 13 per row.
   */
  async append(c: PoolClient, rows: readonly DecisionRow[]): Promise<number> {
    const columns: unknown[][] = Array.from({ length: 13 }, () => new Array(rows.length));
    for (const [i, r] of rows.entries()) {
      const values = [
        r.tenantId,
        r.at,
        r.runId,
        r.turn,
        r.point,
        r.version,
        r.hash,
        r.event,
        r.eventChars,
        r.truncated,
        r.ctx,
        r.record,
        r.shadow,
      ];
      for (const [k, value] of values.entries()) (columns[k] as unknown[])[i] = value;
    }
    await c.query(this.#append, columns);
    return rows.length;
  }

  async decisions(db: Db, query: Required<Pick<DecisionQuery, "tenantId" | "limit">> & DecisionQuery) {
    const result = await db.query<DecisionDbRow>(
      `SELECT * FROM (SELECT id, tenant_id, ${ms("at")} AS at, run_id, turn, point, version, bundle_hash, event,
                             event_chars, truncated, ctx, record, shadow
                        FROM ${this.#s}decisions
                       WHERE tenant_id = $1 AND ($2::text IS NULL OR point = $2)
                         AND ($3::bigint IS NULL OR at >= to_timestamp($3::bigint / 1000.0))
                       ORDER BY id DESC LIMIT $4) d ORDER BY id`,
      [query.tenantId, query.point ?? null, query.since ?? null, query.limit],
    );
    return result.rows.map(toStoredDecision) satisfies StoredDecision[];
  }

  async prune(c: PoolClient, input: PruneInput): Promise<number> {
    const s = this.#s;
    // As in the SQLite store: below the oldest record young enough, from the oldest end of the index.
    const aged = await c.query(
      `DELETE FROM ${s}decisions WHERE tenant_id = $1 AND id < coalesce((SELECT id FROM ${s}decisions
         WHERE tenant_id = $1 AND at >= $2 ORDER BY id LIMIT 1), 9223372036854775807)`,
      [input.tenantId, new Date(input.before)],
    );
    const over = await c.query(
      `DELETE FROM ${s}decisions WHERE tenant_id = $1 AND id <= (SELECT id FROM ${s}decisions WHERE tenant_id = $1
         ORDER BY id DESC LIMIT 1 OFFSET $2)`,
      [input.tenantId, input.keep],
    );
    return (aged.rowCount ?? 0) + (over.rowCount ?? 0);
  }
}
