import type { FailureReport, FleetQuarantine, QuarantineSettings } from "../../dispatch/index.js";
import type { TenantId } from "../../protocol/index.js";
import type { VersionAction } from "../bundle-store.js";
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
import { versionNotFound } from "../store-rules.js";
import type { MemoryAudit } from "./memory-audit.js";
import type { TenantRow } from "./memory-tenant.js";

export interface MemoryQuarantineDeps {
  readonly tenant: (tenantId: TenantId) => TenantRow | undefined;
  readonly audit: MemoryAudit;
  readonly clock: () => number;
}

/** The memory store's quarantine book: shared by the runtimes of one process that share the store. */
export class MemoryQuarantine implements StoreQuarantine {
  readonly #d: MemoryQuarantineDeps;
  readonly #entries = new Map<string, FleetQuarantine>();
  readonly #failures = new Map<string, FailureRow[]>();
  readonly #listeners = new Set<(entry: FleetQuarantine) => void>();

  constructor(deps: MemoryQuarantineDeps) {
    this.#d = deps;
  }

  async report(report: FailureReport, settings: QuarantineSettings): Promise<FleetQuarantine | undefined> {
    const { tenantId, bundleHash, host, failures } = checkReport(report);
    const id = `${tenantId}\u0000${bundleHash}`;
    const now = this.#d.clock();
    const previous = this.#entries.get(id);
    if (inForce(previous, now)) return previous;
    const rows = [...(this.#failures.get(id) ?? []), ...failures.map((f) => ({ ...f, host }))].filter(
      (f) => f.at > now - settings.windowMs,
    );
    this.#failures.set(id, rows);
    const entry = nextQuarantine({ tenantId, bundleHash }, previous, rows, now, settings);
    if (entry === undefined) return undefined;
    this.#entries.set(id, entry);
    this.#failures.delete(id);
    for (const listener of this.#listeners) listener(entry);
    return entry;
  }

  watch(listener: (entry: FleetQuarantine) => void): () => void {
    this.#listeners.add(listener);
    const now = this.#d.clock();
    for (const entry of this.#entries.values()) if (inForce(entry, now)) listener(entry);
    return () => this.#listeners.delete(listener);
  }

  async list(query: QuarantineQuery = {}): Promise<QuarantineRecord[]> {
    const tenantId = query.tenantId === undefined ? undefined : checkTenantId(query.tenantId);
    const now = this.#d.clock();
    return [...this.#entries.values()]
      .filter((e) => (tenantId === undefined || e.tenantId === tenantId) && (query.all === true || inForce(e, now)))
      .sort((a, b) => b.since - a.since)
      .map((e) => this.#record(e));
  }

  async release(input: VersionAction): Promise<QuarantineRecord> {
    const { tenantId, version, by } = checkVersionAction(input);
    const hash = this.#d.tenant(tenantId)?.versions.get(version)?.hash;
    if (hash === undefined) throw versionNotFound(tenantId, version);
    const id = `${tenantId}\u0000${hash}`;
    const now = this.#d.clock();
    const entry = this.#entries.get(id);
    if (!inForce(entry, now)) throw notQuarantined(tenantId, version);
    const released = { ...entry, releasedAt: now, releasedBy: by };
    this.#entries.set(id, released);
    this.#failures.delete(id);
    this.#d.audit.write(now, tenantId, "release", version, null, hash, by, releaseDetail(entry));
    for (const listener of this.#listeners) listener(released);
    return this.#record(released);
  }

  #record(entry: FleetQuarantine): QuarantineRecord {
    const versions = [...(this.#d.tenant(entry.tenantId)?.versions.values() ?? [])]
      .filter((v) => v.hash === entry.bundleHash)
      .map((v) => v.version);
    return { ...entry, versions };
  }
}
