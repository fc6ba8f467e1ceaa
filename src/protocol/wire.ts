import { z } from "zod";
import { BundleHash, TenantId } from "./ids.js";

/**
 * Host ↔ sandbox worker messages over the fork IPC channel. Requests carry ids; every pending id settles
 * exactly once (as `sandbox_crashed` if the worker dies). Event, ctx and reply travel as JSON strings the
 * worker never parses: the worker moves strings between the channel and the isolate.
 */

export const SandboxLimits = z.strictObject({
  memoryMb: z.number().int().min(8),
  maxResultBytes: z.number().int().positive(),
  maxStateBytes: z.number().int().positive(),
  maxLogLines: z.number().int().nonnegative(),
  maxLogBytes: z.number().int().nonnegative(),
  /** Bound on evaluating the bundle in a fresh isolate (`loadTimeoutOf`); the worker's default when absent. */
  loadTimeoutMs: z.number().int().positive().optional(),
});
export type SandboxLimits = z.infer<typeof SandboxLimits>;

export const WorkerRequest = z.discriminatedUnion("kind", [
  /** Make a bundle's code known to the worker; sent once per (worker, bundle hash) before its first call. */
  z.strictObject({ kind: z.literal("load"), bundleHash: BundleHash, code: z.string(), limits: SandboxLimits }),
  z.strictObject({
    kind: z.literal("call"),
    id: z.number().int().nonnegative(),
    tenantId: TenantId,
    bundleHash: BundleHash,
    point: z.string(),
    eventJson: z.string(),
    ctxJson: z.string(),
    timeoutMs: z.number().int().positive(),
  }),
  z.strictObject({
    kind: z.literal("describe"),
    id: z.number().int().nonnegative(),
    tenantId: TenantId,
    bundleHash: BundleHash,
  }),
  z.strictObject({ kind: z.literal("unload"), bundleHash: BundleHash }),
]);
export type WorkerRequest = z.infer<typeof WorkerRequest>;

export const WorkerResponse = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("ready"), pid: z.number().int() }),
  /** `wallMs`: the handler's run time in the worker; `loadMs`: isolate creation and bundle evaluation before it (cold calls only). */
  z.strictObject({
    kind: z.literal("replied"),
    id: z.number().int().nonnegative(),
    reply: z.string(),
    cpuMs: z.number(),
    wallMs: z.number(),
    loadMs: z.number().optional(),
  }),
  z.strictObject({
    kind: z.literal("failed"),
    id: z.number().int().nonnegative(),
    code: z.enum(["timeout", "memory_limit", "unavailable", "threw"]),
    message: z.string(),
    cpuMs: z.number(),
    wallMs: z.number(),
    loadMs: z.number().optional(),
  }),
]);
export type WorkerResponse = z.infer<typeof WorkerResponse>;
