import { z } from "zod";

/**
 * Sandbox limits (docs/architecture.md, "Limits"). All configurable, all validated at construction. Each is named for
 * what it counts: `*Chars` limits count UTF-16 code units of JSON text (what `string.length` counts, so at most 3×
 * that in UTF-8 bytes), `maxBundleBytes` counts UTF-8 bytes of the bundle script.
 */
export const Limits = z.strictObject({
  /**
   * Per-call timeout in ms of the handler, in CPU time of the thread running its isolate; the wall clock
   * bounds it only as a backstop, `maxWallBackstopOf` (what burns no CPU: `Atomics.wait`, a starved machine).
   */
  timeoutMs: z.number().int().min(1).max(60_000).default(50),
  /**
   * Bound on loading a bundle into a fresh isolate (compiling and evaluating its top-level code), which a
   * cold call does before its handler runs. Default: `max(timeoutMs, 1000)` (see `loadTimeoutOf`). A load
   * past it fails the call as `timeout`, and that counts towards quarantine like any timeout.
   */
  loadTimeoutMs: z.number().int().min(1).max(60_000).optional(),
  /** Isolate heap in MB; isolated-vm's minimum is 8. */
  memoryMb: z.number().int().min(8).max(2_048).default(32),
  /** Longest event JSON a hook is handed; a longer one fails the call as `event_too_large`. */
  maxEventChars: z
    .number()
    .int()
    .min(1_024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  /** Longest JSON of a hook's result; checked in the isolate and again by the host. */
  maxResultChars: z
    .number()
    .int()
    .min(256)
    .max(16 * 1024 * 1024)
    .default(64 * 1024),
  /** Longest JSON of the run-scoped `ctx.state` a hook hands back. */
  maxStateChars: z
    .number()
    .int()
    .min(2)
    .max(1024 * 1024)
    .default(16 * 1024),
  maxLogLines: z.number().int().min(0).max(10_000).default(50),
  /** Budget for the JSON of all log lines of one call (past it, lines are dropped). */
  maxLogChars: z
    .number()
    .int()
    .min(0)
    .max(1024 * 1024)
    .default(8 * 1024),
  /** Largest bundle script, in UTF-8 bytes. */
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

const DEFAULT_LOAD_TIMEOUT_MS = 1_000;

/** The load timeout that applies: `loadTimeoutMs`, else `max(timeoutMs, 1000)`. */
export function loadTimeoutOf(limits: Pick<Limits, "timeoutMs" | "loadTimeoutMs">): number {
  return limits.loadTimeoutMs ?? Math.max(limits.timeoutMs, DEFAULT_LOAD_TIMEOUT_MS);
}

/**
 * How many timeouts of wall-clock time a call may take before the sandbox stops it whatever its CPU time:
 * the worker picks a factor between these by how busy the machine is (sandbox/worker/cpu-stretch.ts), 1.5
 * on an idle one, so a spinning hook is stopped soon after its CPU limit and a starved one is not.
 */
export const MIN_WALL_BACKSTOP_FACTOR = 1.5;
export const MAX_WALL_BACKSTOP_FACTOR = 5;

/**
 * The most wall-clock time a handler whose CPU-time timeout is `timeoutMs` may take: past it the worker has
 * stopped it (its own backstop, sized by the load, is at most this); the host kills the worker
 * `killGraceMs` later. Loose on purpose: a call the machine starves of CPU still finishes, and what burns
 * no CPU still ends.
 */
export function maxWallBackstopOf(timeoutMs: number): number {
  return timeoutMs * MAX_WALL_BACKSTOP_FACTOR;
}

/** Limits that had names saying bytes while they counted UTF-16 code units, and their names now. */
export const RENAMED_LIMITS: Readonly<Record<string, string>> = {
  maxEventBytes: "maxEventChars",
  maxResultBytes: "maxResultChars",
  maxStateBytes: "maxStateChars",
  maxLogBytes: "maxLogChars",
};
