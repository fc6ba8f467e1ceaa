import type { SandboxLimits, WorkerRequest, WorkerResponse } from "./wire.js";

/**
 * Hand-written guards that accept exactly what `WorkerRequest` / `WorkerResponse` (wire.ts) accept, for the
 * channel's hot path: a zod parse per call costs microseconds, these cost tens of nanoseconds and allocate
 * nothing. A property test holds them equal to the zod schemas, which stay the specification.
 */

const SAFE_ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const HASH = /^sha256-[0-9a-f]{64}$/;

type Record_ = Record<string, unknown>;

function isRecord(value: unknown): value is Record_ {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** zod's strict objects reject keys they do not declare, own or inherited (`for…in`). */
function hasOnlyKeys(value: Record_, allowed: (key: string) => boolean): boolean {
  for (const key in value) if (!allowed(key)) return false;
  return true;
}

function isInt(value: unknown, min: number): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= min;
}

const isTenantId = (v: unknown): boolean => typeof v === "string" && SAFE_ID.test(v);
const isHash = (v: unknown): boolean => typeof v === "string" && HASH.test(v);

const LIMIT_KEYS = new Set([
  "memoryMb",
  "maxResultChars",
  "maxStateChars",
  "maxLogLines",
  "maxLogChars",
  "loadTimeoutMs",
]);
const LOAD_KEYS = new Set(["kind", "bundleHash", "code", "limits"]);
const CALL_KEYS = new Set(["kind", "id", "bundleHash", "call"]);
const SANDBOX_CALL_KEYS = new Set(["tenantId", "point", "eventJson", "ctxJson", "timeoutMs", "priority"]);
const DESCRIBE_KEYS = new Set(["kind", "id", "tenantId", "bundleHash"]);
const UNLOAD_KEYS = new Set(["kind", "bundleHash"]);
const CANCEL_KEYS = new Set(["kind", "id"]);
const READY_KEYS = new Set(["kind", "pid"]);
const RESULT_KEYS = new Set(["kind", "id", "result"]);
const REPLIED_KEYS = new Set(["type", "reply", "cpuMs", "runMs", "loadMs", "loadAfterRecycle", "evicted"]);
const FAILED_KEYS = new Set(["type", "failure", "cpuMs", "runMs", "loadMs", "loadAfterRecycle", "evicted"]);
const FAILURE_KEYS = new Set(["code", "message"]);
const FAILED_CODES = new Set(["timeout", "memory_limit", "unavailable", "threw"]);

const has = (keys: ReadonlySet<string>) => (key: string) => keys.has(key);
const inLimits = has(LIMIT_KEYS);
const inLoad = has(LOAD_KEYS);
const inCall = has(CALL_KEYS);
const inSandboxCall = has(SANDBOX_CALL_KEYS);
const inDescribe = has(DESCRIBE_KEYS);
const inUnload = has(UNLOAD_KEYS);
const inCancel = has(CANCEL_KEYS);
const inReady = has(READY_KEYS);
const inResult = has(RESULT_KEYS);
const inReplied = has(REPLIED_KEYS);
const inFailed = has(FAILED_KEYS);
const inFailure = has(FAILURE_KEYS);

function isSandboxLimits(v: unknown): v is SandboxLimits {
  return (
    isRecord(v) &&
    isInt(v.memoryMb, 8) &&
    isInt(v.maxResultChars, 1) &&
    isInt(v.maxStateChars, 1) &&
    isInt(v.maxLogLines, 0) &&
    isInt(v.maxLogChars, 0) &&
    (v.loadTimeoutMs === undefined || isInt(v.loadTimeoutMs, 1)) &&
    hasOnlyKeys(v, inLimits)
  );
}

/** True exactly when `WorkerRequest.safeParse(value).success` (checked by test/sandbox/process/wire-guard.test.ts). */
export function isWorkerRequest(value: unknown): value is WorkerRequest {
  if (!isRecord(value)) return false;
  switch (value.kind) {
    case "call":
      return isInt(value.id, 0) && isHash(value.bundleHash) && isSandboxCall(value.call) && hasOnlyKeys(value, inCall);
    case "load":
      return (
        isHash(value.bundleHash) &&
        typeof value.code === "string" &&
        isSandboxLimits(value.limits) &&
        hasOnlyKeys(value, inLoad)
      );
    case "describe":
      return (
        isInt(value.id, 0) && isTenantId(value.tenantId) && isHash(value.bundleHash) && hasOnlyKeys(value, inDescribe)
      );
    case "unload":
      return isHash(value.bundleHash) && hasOnlyKeys(value, inUnload);
    case "cancel":
      return isInt(value.id, 0) && hasOnlyKeys(value, inCancel);
    default:
      return false;
  }
}

const isFiniteNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isOptionalFinite = (v: unknown): boolean => v === undefined || isFiniteNumber(v);

function isSandboxCall(v: unknown): boolean {
  return (
    isRecord(v) &&
    isTenantId(v.tenantId) &&
    typeof v.point === "string" &&
    typeof v.eventJson === "string" &&
    typeof v.ctxJson === "string" &&
    isInt(v.timeoutMs, 1) &&
    (v.priority === undefined || v.priority === "observe") &&
    hasOnlyKeys(v, inSandboxCall)
  );
}

function isWireResult(v: unknown): boolean {
  if (!isRecord(v) || !isFiniteNumber(v.cpuMs) || !isFiniteNumber(v.runMs) || !isOptionalFinite(v.loadMs)) return false;
  if (v.loadAfterRecycle !== undefined && v.loadAfterRecycle !== true) return false;
  if (v.evicted !== undefined && !isInt(v.evicted, 1)) return false;
  switch (v.type) {
    case "replied":
      return typeof v.reply === "string" && hasOnlyKeys(v, inReplied);
    case "failed": {
      const failure = v.failure;
      return (
        isRecord(failure) &&
        typeof failure.code === "string" &&
        FAILED_CODES.has(failure.code) &&
        typeof failure.message === "string" &&
        hasOnlyKeys(failure, inFailure) &&
        hasOnlyKeys(v, inFailed)
      );
    }
    default:
      return false;
  }
}

/** True exactly when `WorkerResponse.safeParse(value).success`. */
export function isWorkerResponse(value: unknown): value is WorkerResponse {
  if (!isRecord(value)) return false;
  switch (value.kind) {
    case "result":
      return isInt(value.id, 0) && isWireResult(value.result) && hasOnlyKeys(value, inResult);
    case "ready":
      return isInt(value.pid, Number.MIN_SAFE_INTEGER) && hasOnlyKeys(value, inReady);
    default:
      return false;
  }
}
