import type { BundleHash, TenantId } from "../../protocol/index.js";
import type { AuditEntry, AuditType } from "../bundle-store.js";

/** The memory store's audit log: what the SQL stores keep in their `audit` table. */
export class MemoryAudit {
  readonly #entries: AuditEntry[] = [];

  /** Appends one entry; ids count from 1, as the SQL stores' do. */
  write(
    at: number,
    tenantId: TenantId,
    type: AuditType,
    version: number | null,
    fromVersion: number | null,
    hash: BundleHash | null,
    by: string,
    detail?: string,
  ): void {
    this.#entries.push({
      id: this.#entries.length + 1,
      at: new Date(at).toISOString(),
      tenantId,
      type,
      version,
      fromVersion,
      hash,
      by,
      detail: detail ?? null,
    });
  }

  /** The last `limit` entries, of one tenant or of all, oldest first. */
  entries(tenantId: TenantId | undefined, limit: number): AuditEntry[] {
    const matching = tenantId === undefined ? this.#entries : this.#entries.filter((e) => e.tenantId === tenantId);
    return matching.slice(-limit);
  }
}
