import { z } from "zod";

/**
 * Sandbox limits (DESIGN §5). All configurable, all validated at construction. Sizes are in UTF-16 code
 * units where they are checked on strings (what `string.length` counts), which bounds bytes to 3× that.
 */
export const Limits = z.strictObject({
  /** Per-call CPU/wall timeout in ms, enforced by `applySync` and by the worker's watchdog. */
  timeoutMs: z.number().int().min(1).max(60_000).default(50),
  /** Isolate heap in MB; isolated-vm's minimum is 8. */
  memoryMb: z.number().int().min(8).max(2_048).default(32),
  maxEventBytes: z
    .number()
    .int()
    .min(1_024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  maxResultBytes: z
    .number()
    .int()
    .min(256)
    .max(16 * 1024 * 1024)
    .default(64 * 1024),
  maxStateBytes: z
    .number()
    .int()
    .min(2)
    .max(1024 * 1024)
    .default(16 * 1024),
  maxLogLines: z.number().int().min(0).max(10_000).default(50),
  maxLogBytes: z
    .number()
    .int()
    .min(0)
    .max(1024 * 1024)
    .default(8 * 1024),
  maxBundleBytes: z
    .number()
    .int()
    .min(1_024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
});
export type Limits = z.infer<typeof Limits>;
export type LimitsInput = z.input<typeof Limits>;

export const DEFAULT_LIMITS: Limits = Limits.parse({});
