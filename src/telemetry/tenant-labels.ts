import { OTHER_TENANT } from "./names.js";

/** Distinct tenants a metric reports by name by default; the rest are reported together as `other`. */
export const DEFAULT_MAX_TENANTS = 100;

/**
 * Bounds the cardinality of the tenant attribute: the first `max` distinct tenants seen keep their id, every
 * later one is `other`, so a platform with a million tenants exports at most `max + 1` series per metric
 * and point. Spans are not bounded (each carries its own tenant id): they are sampled, not aggregated.
 */
export class TenantLabels {
  readonly #max: number;
  readonly #named = new Set<string>();

  constructor(max = DEFAULT_MAX_TENANTS) {
    this.#max = max;
  }

  of(tenantId: string): string {
    if (this.#named.has(tenantId)) return tenantId;
    if (this.#named.size >= this.#max) return OTHER_TENANT;
    this.#named.add(tenantId);
    return tenantId;
  }
}
