import { z } from "zod";
import { BundleHash, TenantId } from "./ids.js";

/**
 * Host ↔ sandbox worker messages, carried as frames on the worker's channel (frames.ts). Requests carry ids;
 * every pending id settles exactly once (as `sandbox_crashed` if the worker dies). Event, ctx and reply
 * travel as JSON strings the worker never parses: the worker moves strings between the channel and the
 * isolate.
 */

export const SandboxLimits = z.strictObject({
  memoryMb: z.number().int().min(8),
  maxResultChars: z.number().int().positive(),
  maxStateChars: z.number().int().positive(),
  maxLogLines: z.number().int().nonnegative(),
  maxLogChars: z.number().int().nonnegative(),
  /** Bound on evaluating the bundle in a fresh isolate (`loadTimeoutOf`); the worker's default when absent. */
  loadTimeoutMs: z.number().int().positive().optional(),
});
export type SandboxLimits = z.infer<typeof SandboxLimits>;

/** The `SandboxCall` (executor.ts) as the wire checks it; the worker hands it to the pool unchanged. */
export const WireCall = z.strictObject({
  tenantId: TenantId,
  point: z.string(),
  eventJson: z.string(),
  ctxJson: z.string(),
  timeoutMs: z.number().int().positive(),
  priority: z.literal("observe").optional(),
});

export const WorkerRequest = z.discriminatedUnion("kind", [
  /** Make a bundle's code known to the worker; sent once per (worker, bundle hash) before its first call. */
  z.strictObject({ kind: z.literal("load"), bundleHash: BundleHash, code: z.string(), limits: SandboxLimits }),
  z.strictObject({
    kind: z.literal("call"),
    id: z.number().int().nonnegative(),
    bundleHash: BundleHash,
    call: WireCall,
  }),
  z.strictObject({
    kind: z.literal("describe"),
    id: z.number().int().nonnegative(),
    tenantId: TenantId,
    bundleHash: BundleHash,
  }),
  z.strictObject({ kind: z.literal("unload"), bundleHash: BundleHash }),
  /**
   * The host took back a call it sent (another worker runs it: the call was held behind a long one); the
   * worker answers it `unavailable` without running it if it has not run it yet, and ignores the cancel
   * otherwise. The host drops whatever the worker answers for that id.
   */
  z.strictObject({ kind: z.literal("cancel"), id: z.number().int().nonnegative() }),
]);
export type WorkerRequest = z.infer<typeof WorkerRequest>;

/** The failures a worker reports itself; the host adds the rest (crashes, deadlines, refusals). */
export const WorkerFailureCode = z.enum(["timeout", "memory_limit", "unavailable", "threw"]);
export type WorkerFailureCode = z.infer<typeof WorkerFailureCode>;

const cost = {
  cpuMs: z.number(),
  runMs: z.number(),
  loadMs: z.number().optional(),
  loadAfterRecycle: z.literal(true).optional(),
  evicted: z.number().int().positive().optional(),
};

/** The `SandboxResult` (executor.ts) as a worker sends it: the pool's result, unchanged, under its request id. */
export const WireResult = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("replied"), reply: z.string(), ...cost }),
  z.strictObject({
    type: z.literal("failed"),
    failure: z.strictObject({ code: WorkerFailureCode, message: z.string() }),
    ...cost,
  }),
]);

export const WorkerResponse = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("ready"), pid: z.number().int() }),
  z.strictObject({ kind: z.literal("result"), id: z.number().int().nonnegative(), result: WireResult }),
]);
export type WorkerResponse = z.infer<typeof WorkerResponse>;
