import type { TenantId } from "../../protocol/index.js";
import {
  checkDecisionQuery,
  checkLogSettingsInput,
  checkPrune,
  type DecisionQuery,
  type DecisionRow,
  describeLogSettings,
  type LogSettings,
  type LogSettingsChange,
  type LogSettingsInput,
  type PruneInput,
  type StoredDecision,
  type TenantLogSettings,
} from "../decision-log-store.js";
import type { MemoryAudit } from "./memory-audit.js";

interface Settings extends LogSettings {
  readonly at: number;
  readonly by: string;
}

/** The memory store's decision log: the same contract as the SQL stores' tables. */
export class MemoryDecisionLog {
  readonly #audit: MemoryAudit;
  readonly #settings = new Map<TenantId, Settings>();
  readonly #rows: StoredDecision[] = [];
  #nextId = 1;

  constructor(audit: MemoryAudit) {
    this.#audit = audit;
  }

  logSettings(tenantId: TenantId | undefined): TenantLogSettings[] {
    const ids = [...this.#settings.keys()].filter((id) => tenantId === undefined || id === tenantId).sort();
    return ids.flatMap((id) => {
      const found = this.#settings.get(id);
      if (found === undefined) return [];
      const { at, by, ...settings } = found;
      return [{ tenantId: id, ...settings, updatedAt: new Date(at).toISOString(), updatedBy: by }];
    });
  }

  /** With its audit row, as the SQL stores write it. */
  setLogSettings(input: LogSettingsInput, at: number): LogSettingsChange {
    const { tenantId, settings, by } = checkLogSettingsInput(input);
    const found = this.#settings.get(tenantId);
    const previous = found === undefined ? null : withoutMeta(found);
    if (settings === null) this.#settings.delete(tenantId);
    else this.#settings.set(tenantId, { ...settings, at, by });
    this.#audit.write(at, tenantId, "log", null, null, null, by, describeLogSettings(settings));
    return { tenantId, settings, previous };
  }

  append(rows: readonly DecisionRow[]): number {
    for (const row of rows) this.#rows.push({ ...row, id: this.#nextId++, at: new Date(row.at).toISOString() });
    return rows.length;
  }

  decisions(query: DecisionQuery): StoredDecision[] {
    const { tenantId, point, since, limit } = checkDecisionQuery(query);
    const matching = this.#rows.filter(
      (r) =>
        r.tenantId === tenantId &&
        (point === undefined || r.point === point) &&
        (since === undefined || Date.parse(r.at) >= since),
    );
    return matching.slice(-limit);
  }

  prune(input: PruneInput): number {
    const { tenantId, before, keep } = checkPrune(input);
    const ids = this.#rows.filter((r) => r.tenantId === tenantId).map((r) => r.id);
    const cut = new Set(ids.slice(0, Math.max(0, ids.length - keep)));
    let removed = 0;
    for (let i = this.#rows.length - 1; i >= 0; i--) {
      const row = this.#rows[i];
      if (row === undefined || row.tenantId !== tenantId) continue;
      if (cut.has(row.id) || Date.parse(row.at) < before) {
        this.#rows.splice(i, 1);
        removed++;
      }
    }
    return removed;
  }
}

function withoutMeta(settings: Settings): LogSettings {
  const { sample, mask, retainDays, retain } = settings;
  return { sample, mask, retainDays, retain };
}
