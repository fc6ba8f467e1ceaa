export type { ActiveCacheOptions } from "./active-cache.js";
export type {
  ActivationResult,
  AuditEntry,
  AuditQuery,
  AuditType,
  BundleStore,
  StoredBundle,
  TenantAction,
  TenantSummary,
  UploadInput,
  UploadResult,
  VersionAction,
  VersionDetail,
  VersionRecord,
} from "./bundle-store.js";
export type { CheckpointLedger, ResumeClaim } from "./checkpoint-ledger.js";
export {
  checkLogSettings,
  DEFAULT_LOG_SETTINGS,
  type DecisionLogStore,
  type DecisionQuery,
  type DecisionRow,
  type LogSettings,
  type LogSettingsChange,
  type LogSettingsInput,
  type MaskRule,
  type PruneInput,
  type StoredDecision,
  type TenantLogSettings,
} from "./decision-log-store.js";
export { StoreError, type StoreErrorCode } from "./errors.js";
export { MemoryBundleStore, type MemoryStoreOptions } from "./memory/memory-store.js";
export { type OpenedStore, type OpenStoreOptions, openStore, type StoreKind } from "./open-store.js";
export { PostgresBundleStore, type PostgresStoreOptions } from "./postgres/postgres-store.js";
export type { QuarantineQuery, QuarantineRecord, StoreQuarantine } from "./quarantine-rules.js";
export { APPLICATION_ID, SCHEMA_VERSION } from "./schema.js";
export { SqliteBundleStore, type SqliteStoreOptions } from "./sqlite/sqlite-store.js";
export type { StoreEvent } from "./store-health.js";
export { MAX_CONFIG_BYTES, type UploadStep } from "./store-inputs.js";
export { DEFAULT_PG_SCHEMA, resolveStoreLocation, type StoreLocation, storeLocation } from "./store-location.js";
