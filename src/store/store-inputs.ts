import { createHash } from "node:crypto";
import {
  BundleHash,
  BundleManifest,
  DEFAULT_LIMITS,
  JsonValue,
  TenantId,
  type TenantId as TenantIdType,
} from "../protocol/index.js";
import type {
  AuditQuery,
  RolloutInput,
  ShadowInput,
  TenantAction,
  UploadInput,
  VersionAction,
} from "./bundle-store.js";
import { StoreError } from "./errors.js";

/** A tenant's config is sent with every hook call (as `ctx.config`): keep it small. */
export const MAX_CONFIG_BYTES = 64 * 1024;
/** Deploy-gate reports are operator reading, not data: capped so a chatty report cannot bloat the store. */
export const MAX_GATE_REPORT_BYTES = 1024 * 1024;
export const MAX_BY_CHARS = 128;
export const DEFAULT_AUDIT_LIMIT = 100;
export const MAX_AUDIT_LIMIT = 10_000;

/** Where an upload transaction is when a store's `onUploadStep` is called (crash tests only). */
export type UploadStep = "tenant" | "bundle" | "version" | "activation";

/** An upload after validation: what both store implementations write. */
export interface CheckedUpload {
  readonly tenantId: TenantIdType;
  readonly hash: BundleHash;
  readonly code: string;
  readonly sourceMap: string | null;
  readonly manifest: BundleManifest;
  readonly manifestJson: string;
  readonly bytes: number;
  /** Undefined: carry the latest version's config forward. */
  readonly configJson: string | undefined;
  readonly gateReportJson: string | null;
  readonly by: string;
  readonly activate: boolean;
}

export function checkTenantId(value: unknown): TenantIdType {
  const parsed = TenantId.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new StoreError(
    "invalid_tenant",
    `Invalid tenant id ${JSON.stringify(value)}: use 1–64 characters of lowercase letters, digits, '.', '_' or '-', starting with a letter or digit.`,
  );
}

export function checkVersion(value: unknown): number {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 1) return value;
  throw new StoreError(
    "invalid_version",
    `Invalid version ${JSON.stringify(value)}: versions are positive integers (see \`isohook versions --tenant <id>\`).`,
  );
}

export function checkBy(value: unknown): string {
  if (typeof value === "string" && value.length >= 1 && value.length <= MAX_BY_CHARS && !/\p{Cc}/u.test(value)) {
    return value;
  }
  throw new StoreError(
    "invalid_input",
    `Invalid uploader ${JSON.stringify(value)}: pass an operator name of 1–${MAX_BY_CHARS} printable characters (--by or $USER).`,
  );
}

export function checkHash(value: unknown): BundleHash {
  const parsed = BundleHash.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new StoreError(
    "invalid_input",
    `Invalid bundle hash ${JSON.stringify(value)}: expected sha256-<64 hex digits>.`,
  );
}

/** A tenant action's input, validated: tenant id first, then who. */
export function checkTenantAction(input: TenantAction): TenantAction {
  const tenantId = checkTenantId(input.tenantId);
  return { tenantId, by: checkBy(input.by) };
}

/** A version action's input, validated: tenant id, version, then who. */
export function checkVersionAction(input: VersionAction): VersionAction {
  const tenantId = checkTenantId(input.tenantId);
  const version = checkVersion(input.version);
  return { tenantId, version, by: checkBy(input.by) };
}

/** A rollout after validation: the percentage as basis points (1–10 000; 10 000 is an activation). */
export interface CheckedRollout extends VersionAction {
  readonly basisPoints: number;
}

export function checkRollout(input: RolloutInput): CheckedRollout {
  const action = checkVersionAction(input);
  const { percent } = input;
  const basisPoints = typeof percent === "number" ? Math.round(percent * 100) : Number.NaN;
  if (!(basisPoints >= 1 && basisPoints <= 10_000 && Math.abs(percent * 100 - basisPoints) < 1e-6)) {
    throw new StoreError(
      "invalid_input",
      `Invalid rollout percentage ${JSON.stringify(percent)}: give a number above 0 and at most 100, in steps of 0.01 (100 activates the version).`,
    );
  }
  return { ...action, basisPoints };
}

export function checkShadow(input: ShadowInput): ShadowInput {
  const { tenantId, by } = checkTenantAction(input);
  return { tenantId, by, version: input.version === null ? null : checkVersion(input.version) };
}

/** Basis points (hundredths of a percent) as the percentage the contract speaks. */
export const percentOf = (basisPoints: number): number => basisPoints / 100;

export function checkAuditLimit(query: AuditQuery | undefined): number {
  const limit = query?.limit ?? DEFAULT_AUDIT_LIMIT;
  if (Number.isSafeInteger(limit) && limit >= 1 && limit <= MAX_AUDIT_LIMIT) return limit;
  throw new StoreError("invalid_input", `Invalid audit limit ${limit}: use an integer from 1 to ${MAX_AUDIT_LIMIT}.`);
}

export function hashCode(code: string): BundleHash {
  return BundleHash.parse(`sha256-${createHash("sha256").update(code, "utf8").digest("hex")}`);
}

/** Serializes a JSON value after validating it; `what` names it in errors. */
export function checkJson(value: unknown, what: string, maxBytes: number): string {
  const parsed = JsonValue.safeParse(value);
  if (!parsed.success)
    throw new StoreError("invalid_input", `The ${what} is not JSON data: ${parsed.error.issues[0]?.message}.`);
  const json = JSON.stringify(parsed.data);
  const bytes = Buffer.byteLength(json, "utf8");
  if (bytes > maxBytes) {
    throw new StoreError(
      "invalid_input",
      `The ${what} is ${bytes} bytes of JSON, over the ${maxBytes}-byte limit: make it smaller.`,
    );
  }
  return json;
}

/** Validates everything about an upload that does not need the store's current state. */
export function checkUpload(input: UploadInput, maxBundleBytes = DEFAULT_LIMITS.maxBundleBytes): CheckedUpload {
  const tenantId = checkTenantId(input.tenantId);
  const by = checkBy(input.by);
  const manifestResult = BundleManifest.safeParse(input.manifest);
  if (!manifestResult.success) {
    const issue = manifestResult.error.issues[0];
    throw new StoreError(
      "invalid_input",
      `The bundle manifest is invalid at ${issue?.path.join(".") || "(root)"}: ${issue?.message}. Rebuild it with the bundler.`,
    );
  }
  const manifest = manifestResult.data;
  if (typeof input.code !== "string") throw new StoreError("invalid_input", "The bundle code must be a string.");
  const bytes = Buffer.byteLength(input.code, "utf8");
  if (bytes > maxBundleBytes) {
    throw new StoreError(
      "invalid_input",
      `The bundle is ${bytes} bytes, over the ${maxBundleBytes}-byte limit: remove dependencies or split the policy.`,
    );
  }
  const hash = hashCode(input.code);
  if (manifest.hash !== hash) {
    throw new StoreError(
      "invalid_input",
      `The manifest says ${manifest.hash} but the code hashes to ${hash}: rebuild the bundle.`,
    );
  }
  if (manifest.bytes !== bytes) {
    throw new StoreError(
      "invalid_input",
      `The manifest says ${manifest.bytes} bytes but the code is ${bytes} bytes: rebuild the bundle.`,
    );
  }
  const sourceMap = input.sourceMap ?? null;
  if (sourceMap !== null && (typeof sourceMap !== "string" || sourceMap.length > 8 * maxBundleBytes)) {
    throw new StoreError(
      "invalid_input",
      `The source map must be a string of at most ${8 * maxBundleBytes} characters.`,
    );
  }
  return {
    tenantId,
    hash,
    code: input.code,
    sourceMap,
    manifest,
    manifestJson: JSON.stringify(manifest),
    bytes,
    configJson: input.config === undefined ? undefined : checkJson(input.config, "tenant config", MAX_CONFIG_BYTES),
    gateReportJson:
      input.gateReport === undefined ? null : checkJson(input.gateReport, "gate report", MAX_GATE_REPORT_BYTES),
    by,
    activate: input.activate === true,
  };
}

/** Parses a manifest read back from the store; a row that does not validate means a damaged store. */
export function readManifest(json: string, hash: string): BundleManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    raw = undefined;
  }
  const parsed = BundleManifest.safeParse(raw);
  if (!parsed.success || parsed.data.hash !== hash) {
    throw new StoreError(
      "corrupt",
      `The stored manifest of bundle ${hash} does not validate: the store is damaged; restore it from a backup.`,
    );
  }
  return parsed.data;
}

/** Parses JSON written by this store (config, gate report); damage means a damaged store. */
export function readJson(json: string, what: string): JsonValue {
  try {
    return JsonValue.parse(JSON.parse(json));
  } catch {
    throw new StoreError(
      "corrupt",
      `The stored ${what} is not valid JSON: the store is damaged; restore it from a backup.`,
    );
  }
}
