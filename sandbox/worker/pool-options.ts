import { SandboxOptionsError } from "./errors.js";
import type { IsolatePoolOptions } from "./pool-types.js";

export interface ResolvedPoolOptions {
  readonly maxIsolates: number;
  readonly maxHeapMb: number;
  readonly maxIdleMs: number;
  readonly spare: boolean;
  readonly cpuGuard: boolean;
}

const POOL_DEFAULTS = { maxIsolates: 256, maxHeapMb: 768, maxIdleMs: 300_000 } as const;

/** Applies defaults and validates ranges, with messages that name the option and the value. */
export function resolvePoolOptions(options: IsolatePoolOptions): ResolvedPoolOptions {
  return {
    maxIsolates: integerFrom("maxIsolates", options.maxIsolates ?? POOL_DEFAULTS.maxIsolates, 1),
    maxHeapMb: integerFrom("maxHeapMb", options.maxHeapMb ?? POOL_DEFAULTS.maxHeapMb, 8),
    maxIdleMs: integerFrom("maxIdleMs", options.maxIdleMs ?? POOL_DEFAULTS.maxIdleMs, 0),
    spare: options.spare ?? true,
    cpuGuard: options.cpuGuard ?? true,
  };
}

function integerFrom(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new SandboxOptionsError(`Expected \`${name}\` to be an integer from ${min} and up, got \`${String(value)}\``);
  }
  return value;
}
