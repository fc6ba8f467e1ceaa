import type { TenantId } from "../../protocol/index.js";
import type { ActivationResult, RolloutResult, ShadowResult } from "../bundle-store.js";
import { type CheckedRollout, percentOf } from "../store-inputs.js";
import { candidateIsActive, noActive, shareDetail } from "../store-rules.js";
import type { MemoryAudit } from "./memory-audit.js";
import { type TenantRow, versionOf } from "./memory-tenant.js";

/** What the memory store lends its rollout and shadow writes. */
export interface MemoryCandidateContext {
  readonly audit: MemoryAudit;
  /** The store's activation; `completing` marks the one `rollout --percent 100` makes. */
  readonly activate: (
    tenantId: TenantId,
    version: number,
    by: string,
    at: number,
    completing: boolean,
  ) => ActivationResult;
}

/**
 * The memory store's rollout and shadow writes on a tenant's record, as postgres-candidates.ts makes them in
 * SQL: a change updates the tenant and writes its audit row.
 */
export class MemoryCandidates {
  readonly #c: MemoryCandidateContext;

  constructor(context: MemoryCandidateContext) {
    this.#c = context;
  }

  rollout(tenant: TenantRow, r: CheckedRollout, at: number): RolloutResult {
    const { tenantId, version, basisPoints, by } = r;
    const { hash } = versionOf(tenantId, tenant, version);
    const active = tenant.active;
    if (active === null) throw noActive(tenantId);
    const before = tenant.rollout;
    const previous = before && { version: before.version, percent: percentOf(before.basisPoints) };
    const percent = percentOf(basisPoints);
    if (basisPoints === 10_000) {
      const { changed } = this.#c.activate(tenantId, version, by, at, true);
      return { tenantId, version, percent, activeVersion: version, previous, activated: changed, changed };
    }
    if (version === active) throw candidateIsActive(tenantId, version, "roll out");
    const unchanged = before?.version === version && before.basisPoints === basisPoints;
    if (!unchanged) {
      tenant.rollout = { version, basisPoints, at, by };
      tenant.updatedAt = at;
      this.#c.audit.write(at, tenantId, "rollout", version, active, hash, by, shareDetail(basisPoints));
    }
    return { tenantId, version, percent, activeVersion: active, previous, activated: false, changed: !unchanged };
  }

  shadow(tenant: TenantRow, tenantId: TenantId, version: number | null, by: string, at: number): ShadowResult {
    const previous = tenant.shadow?.version ?? null;
    if (version === null) {
      if (previous === null) return { tenantId, version: null, previous, changed: false };
      tenant.shadow = null;
      tenant.updatedAt = at;
      const { hash } = versionOf(tenantId, tenant, previous);
      this.#c.audit.write(at, tenantId, "shadow_off", previous, null, hash, by);
      return { tenantId, version: null, previous, changed: true };
    }
    const { hash } = versionOf(tenantId, tenant, version);
    if (tenant.active === null) throw noActive(tenantId);
    if (version === tenant.active) throw candidateIsActive(tenantId, version, "shadow");
    if (previous === version) return { tenantId, version, previous, changed: false };
    tenant.shadow = { version, at, by };
    tenant.updatedAt = at;
    this.#c.audit.write(at, tenantId, "shadow", version, tenant.active, hash, by);
    return { tenantId, version, previous, changed: true };
  }
}
