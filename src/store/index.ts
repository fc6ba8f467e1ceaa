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
export { StoreError, type StoreErrorCode } from "./errors.js";
export { MemoryBundleStore, type MemoryStoreOptions } from "./memory-store.js";
export { APPLICATION_ID, SCHEMA_VERSION } from "./schema.js";
export { SqliteBundleStore, type SqliteStoreOptions, type UploadStep } from "./sqlite-store.js";
export { MAX_CONFIG_BYTES } from "./store-inputs.js";
