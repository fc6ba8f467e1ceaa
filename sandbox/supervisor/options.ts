import { availableParallelism } from "node:os";
import { describeValue, type Limits, type LimitsInput, parseLimits } from "../../src/protocol/index.js";
import { ExecutorOptionsError } from "./errors.js";
import type { SupervisorEvent } from "./events.js";

/**
 * Options of `createHookExecutor`. Everything is validated at construction; a wrong value throws an
 * `ExecutorOptionsError` naming the option, what it must be and what it got.
 */
export interface ExecutorOptions {
  /** `process` (default): isolates in supervised worker processes. `inline`: in this process, tests and benchmarks only. */
  readonly mode?: "process" | "inline";
  /** Sandbox limits (docs/architecture.md, "Limits"); defaults: 50 ms, 32 MB, 1 MB events, 64 KB results… */
  readonly limits?: LimitsInput;
  /** Worker processes (process mode). Default: the number of CPU cores. */
  readonly workers?: number;
  /** A worker above this resident size is drained and replaced (process mode). Default: 1024. */
  readonly rssCapMb?: number;
  /** How often worker RSS is read, in ms (process mode). Default: 1000. */
  readonly rssCheckMs?: number;
  /**
   * How long past a call's timeout the host waits for its worker to answer before killing the worker
   * (process mode). The worker's own `applySync` timeout answers long before this. Default: 1000.
   */
  readonly killGraceMs?: number;
  /** Calls queued on one worker past which new calls fail as `unavailable` (process mode). Default: 10000. */
  readonly maxPendingPerWorker?: number;
  /** Keep one booted worker ready so a crashed worker is replaced at once (process mode). Default: true. */
  readonly spareWorker?: boolean;
  /** Lifecycle events of worker processes (started, exited, recycling), for logs and runtime events. */
  readonly onEvent?: (event: SupervisorEvent) => void;
  /** Aborts start-up. */
  readonly signal?: AbortSignal;
}

/** `ExecutorOptions` after validation and defaults, for process mode. */
export interface ProcessOptions {
  readonly limits: Limits;
  readonly workers: number;
  readonly rssCapBytes: number;
  readonly rssCheckMs: number;
  readonly killGraceMs: number;
  readonly maxPendingPerWorker: number;
  readonly spareWorker: boolean;
  readonly onEvent: ((event: SupervisorEvent) => void) | undefined;
}

const KNOWN = [
  "mode",
  "limits",
  "workers",
  "rssCapMb",
  "rssCheckMs",
  "killGraceMs",
  "maxPendingPerWorker",
  "spareWorker",
  "onEvent",
  "signal",
] as const;
const PROCESS_ONLY = ["workers", "rssCapMb", "rssCheckMs", "killGraceMs", "maxPendingPerWorker", "spareWorker"];

function integer(name: string, value: unknown, fallback: number, min: number, max?: number): number {
  if (value === undefined) return fallback;
  if (typeof value === "number" && Number.isInteger(value) && value >= min && (max === undefined || value <= max)) {
    return value;
  }
  const range = max === undefined ? `from ${min} and up` : `from ${min} to ${max}`;
  throw new ExecutorOptionsError(`Expected \`${name}\` to be an integer ${range}, got \`${describeValue(value)}\``);
}

/** Checks the option object's shape and the mode; returns the mode. */
export function checkCommonOptions(options: ExecutorOptions): "process" | "inline" {
  if (typeof options !== "object" || options === null) {
    throw new ExecutorOptionsError(`Expected executor options to be an object, got \`${describeValue(options)}\``);
  }
  for (const key of Object.keys(options)) {
    if (!(KNOWN as readonly string[]).includes(key)) {
      throw new ExecutorOptionsError(`Unknown executor option \`${key}\`. Known options: ${KNOWN.join(", ")}`);
    }
  }
  const mode = options.mode ?? "process";
  if (mode !== "process" && mode !== "inline") {
    throw new ExecutorOptionsError(`Expected \`mode\` to be "process" or "inline", got \`${describeValue(mode)}\``);
  }
  if (mode === "inline") {
    const stray = PROCESS_ONLY.find((key) => (options as Record<string, unknown>)[key] !== undefined);
    if (stray !== undefined) {
      throw new ExecutorOptionsError(`\`${stray}\` applies to mode "process" only; remove it or use mode "process"`);
    }
  }
  if (options.onEvent !== undefined && typeof options.onEvent !== "function") {
    throw new ExecutorOptionsError(`Expected \`onEvent\` to be a function, got \`${describeValue(options.onEvent)}\``);
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new ExecutorOptionsError(
      `Expected \`signal\` to be an AbortSignal, got \`${describeValue(options.signal)}\``,
    );
  }
  return mode;
}

/** Validates `limits` with the protocol schema, naming the first wrong field. */
export function resolveLimits(limits: LimitsInput | undefined): Limits {
  return parseLimits(limits, (message) => new ExecutorOptionsError(message));
}

export function resolveProcessOptions(options: ExecutorOptions): ProcessOptions {
  const spare = options.spareWorker ?? true;
  if (typeof spare !== "boolean") {
    throw new ExecutorOptionsError(`Expected \`spareWorker\` to be a boolean, got \`${describeValue(spare)}\``);
  }
  return {
    limits: resolveLimits(options.limits),
    workers: integer("workers", options.workers, availableParallelism(), 1),
    rssCapBytes: integer("rssCapMb", options.rssCapMb, 1024, 1) * 1024 * 1024,
    rssCheckMs: integer("rssCheckMs", options.rssCheckMs, 1000, 10),
    killGraceMs: integer("killGraceMs", options.killGraceMs, 1000, 10),
    maxPendingPerWorker: integer("maxPendingPerWorker", options.maxPendingPerWorker, 10_000, 1),
    spareWorker: spare,
    onEvent: options.onEvent,
  };
}

/** Checks executor options without starting anything; throws `ExecutorOptionsError` naming the wrong one. */
export function checkExecutorOptions(options: ExecutorOptions): void {
  if (checkCommonOptions(options) === "process") resolveProcessOptions(options);
  else resolveLimits(options.limits);
}
