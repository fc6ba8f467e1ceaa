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
import type { SqliteDatabase, Statement } from "./open-database.js";

interface SettingsRow {
  tenant_id: TenantId;
  settings: string;
  updated_at: number;
  updated_by: string;
}

interface DecisionDbRow {
  id: number;
  tenant_id: TenantId;
  at: number;
  run_id: string;
  turn: number;
  point: DecisionRow["point"];
  version: number;
  bundle_hash: string;
  event: string;
  event_chars: number;
  truncated: number;
  ctx: string;
  record: string;
  shadow: string | null;
}

/** The SQLite store's decision-log statements (inputs checked by the caller; parameters only). */
export class SqliteDecisionLog {
  readonly #db: SqliteDatabase;
  readonly #statements = new Map<string, Statement>();

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  logSettings(tenantId: TenantId | undefined): TenantLogSettings[] {
    const rows = this.#one(
      `SELECT tenant_id, settings, updated_at, updated_by FROM decision_log_settings
         WHERE @tenant IS NULL OR tenant_id = @tenant ORDER BY tenant_id`,
    ).all({ tenant: tenantId ?? null }) as SettingsRow[];
    return rows.map((row) => ({
      tenantId: row.tenant_id,
      ...readLogSettings(row.settings, row.tenant_id),
      updatedAt: new Date(row.updated_at).toISOString(),
      updatedBy: row.updated_by,
    }));
  }

  /** In one immediate transaction with its audit row. */
  setLogSettings(input: LogSettingsInput, at: number): LogSettingsChange {
    const { tenantId, settings, by } = input;
    const run = this.#db.transaction((): LogSettingsChange => {
      const found = this.#one("SELECT settings FROM decision_log_settings WHERE tenant_id = ?").get(tenantId) as
        | { settings: string }
        | undefined;
      const previous = found === undefined ? null : readLogSettings(found.settings, tenantId);
      if (settings === null) {
        this.#one("DELETE FROM decision_log_settings WHERE tenant_id = ?").run(tenantId);
      } else {
        this.#one(
          `INSERT INTO decision_log_settings (tenant_id, settings, updated_at, updated_by) VALUES (?, ?, ?, ?)
             ON CONFLICT (tenant_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at,
             updated_by = excluded.updated_by`,
        ).run(tenantId, JSON.stringify(settings), at, by);
      }
      this.#one("INSERT INTO audit (at, tenant_id, type, by, detail) VALUES (?, ?, 'log', ?, ?)").run(
        at,
        tenantId,
        by,
        describeLogSettings(settings),
      );
      return { tenantId, settings, previous };
    });
    return run.immediate();
  }

  decisions(query: Required<Pick<DecisionQuery, "tenantId" | "limit">> & DecisionQuery): StoredDecision[] {
    const rows = this.#one(
      `SELECT * FROM (SELECT * FROM decisions WHERE tenant_id = @tenant AND (@point IS NULL OR point = @point)
         AND (@since IS NULL OR at >= @since) ORDER BY id DESC LIMIT @limit) ORDER BY id`,
    ).all({
      tenant: query.tenantId,
      point: query.point ?? null,
      since: query.since ?? null,
      limit: query.limit,
    }) as DecisionDbRow[];
    return rows.map(toStoredDecision);
  }

  prune(input: PruneInput): number {
    const { tenantId, before, keep } = input;
    const run = this.#db.transaction((): number => {
      // Times rise with ids: everything below the oldest record still young enough goes, found from the
      // oldest end of the tenant's index (a cost in the records deleted, not in those kept).
      const aged = this.#one(
        `DELETE FROM decisions WHERE tenant_id = @tenant AND id < coalesce((SELECT id FROM decisions
           WHERE tenant_id = @tenant AND at >= @before ORDER BY id LIMIT 1), 9223372036854775807)`,
      ).run({ tenant: tenantId, before }).changes;
      const over = this.#one(
        `DELETE FROM decisions WHERE tenant_id = @tenant AND id <= (SELECT id FROM decisions WHERE tenant_id = @tenant
           ORDER BY id DESC LIMIT 1 OFFSET @keep)`,
      ).run({ tenant: tenantId, keep }).changes;
      return aged + over;
    });
    return run.immediate();
  }

  #one(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

/** A stored record as the store's contract returns it (shared by the SQL stores). */
export function toStoredDecision(row: DecisionDbRow): StoredDecision {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    at: new Date(row.at).toISOString(),
    runId: row.run_id,
    turn: row.turn,
    point: row.point,
    version: row.version,
    hash: row.bundle_hash,
    event: row.event,
    eventChars: row.event_chars,
    truncated: row.truncated === 1 || (row.truncated as unknown) === true,
    ctx: row.ctx,
    record: row.record,
    shadow: row.shadow,
  };
}

export type { DecisionDbRow };
