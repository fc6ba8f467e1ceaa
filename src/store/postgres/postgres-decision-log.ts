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

/** Rows per INSERT statement when appending a batch (13 parameters each, well under PostgreSQL's 65,535). */
const ROWS_PER_INSERT = 500;

/** The PostgreSQL store's decision-log statements (inputs checked by the caller; parameters only). */
export class PostgresDecisionLog {
  readonly #s: string;
  /** The INSERT text by rows in it: a full batch's chunks share one, so it is built once, not per batch. */
  readonly #inserts = new Map<number, string>();

  constructor(schema: string) {
    this.#s = `"${schema}".`;
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

  async append(c: PoolClient, rows: readonly DecisionRow[]): Promise<number> {
    for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
      const chunk = rows.slice(start, start + ROWS_PER_INSERT);
      const params: unknown[] = [];
      for (const r of chunk) {
        params.push(
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
        );
      }
      await c.query(this.#insertText(chunk.length), params);
    }
    return rows.length;
  }

  /** `at` goes as ms since the epoch (a number is cheaper to send than a Date the driver formats). */
  #insertText(rows: number): string {
    let text = this.#inserts.get(rows);
    if (text !== undefined) return text;
    const tuples = Array.from({ length: rows }, (_, row) => {
      const $ = (column: number) => `$${row * 13 + column}`;
      const rest = Array.from({ length: 11 }, (_, i) => $(i + 3)).join(", ");
      return `(${$(1)}, to_timestamp(${$(2)}::bigint / 1000.0), ${rest})`;
    });
    text = `INSERT INTO ${this.#s}decisions (tenant_id, at, run_id, turn, point, version, bundle_hash, event, event_chars,
       truncated, ctx, record, shadow) VALUES ${tuples.join(", ")}`;
    if (this.#inserts.size < 8) this.#inserts.set(rows, text);
    return text;
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
