import { createHash } from "node:crypto";
import {
  type ActiveBundle,
  BundleHash,
  type HookPoint,
  type JsonObject,
  type JsonValue,
  type SandboxBundle,
  type SandboxCall,
  type SandboxLimits,
  TenantId,
} from "../../src/protocol/index.js";

/**
 * Small bundles and calls for sandbox tests, in the bundle script format of contracts §1 (what esbuild's
 * iife output with `globalName: "__isohook_bundle"` evaluates to), written by hand so a test controls every
 * byte a tenant could.
 */

/** Small sandbox limits for isolate pool tests: a 16 MB heap, short results, state and logs. */
export const POOL_LIMITS: SandboxLimits = {
  memoryMb: 16,
  maxResultChars: 4_096,
  maxStateChars: 1_024,
  maxLogLines: 5,
  maxLogChars: 512,
};

/** A bundle from a raw classic script; the hash is the sha256 of the code, as the bundler makes it. */
export function scriptBundle(code: string): SandboxBundle {
  return { hash: BundleHash.parse(`sha256-${createHash("sha256").update(code).digest("hex")}`), code };
}

/** `bundle` as the store would serve it as a tenant's active version 1, exporting `tool.call`. */
export function activeBundle(tenantId: TenantId, bundle: SandboxBundle): ActiveBundle {
  const manifest = {
    hash: bundle.hash,
    bytes: bundle.code.length,
    hookPoints: ["tool.call" as const],
    sdkVersion: "1",
    entry: "t",
  };
  return { tenantId, version: 1, code: bundle.code, manifest, config: {} };
}

/** A bundle whose default export is the value of the JS expression `hooks` (an object literal, usually). */
export function hooksBundle(hooks: string, prologue = ""): SandboxBundle {
  return scriptBundle(`var __isohook_bundle = (() => {\n${prologue}\nreturn { default: (${hooks}) };\n})();`);
}

export const tenant = (id: string): TenantId => TenantId.parse(id);

export const TOOL_CALL_EVENT = {
  call: { id: "c1", name: "shell", args: { command: "ls -la" } },
  batch: { index: 0, size: 1 },
} as const;

export function ctxJson(
  tenantId: TenantId,
  bundle: SandboxBundle,
  state: JsonObject = {},
  config: JsonValue = {},
): string {
  return JSON.stringify({
    tenantId,
    runId: "run-1",
    turn: 0,
    hookId: `tenant:${tenantId}`,
    bundle: { version: 1, hash: bundle.hash },
    config,
    state,
  });
}

/** A timeout past every executor's limit: the call runs under the executor's own `limits.timeoutMs`. */
export const EXECUTOR_TIMEOUT = 60_000;

/** A bundle and a call on it, spread into `execute(...)` or `invokeHook(executor, ...)`. */
export type BundleCall = readonly [SandboxBundle, SandboxCall & { readonly point: HookPoint }];

/** A `tool.call` call (or another point's) with a valid event and ctx unless given. */
export function hookCall(
  tenantId: TenantId,
  bundle: SandboxBundle,
  options: { point?: HookPoint; event?: unknown; state?: JsonObject; config?: JsonValue; timeoutMs?: number } = {},
): BundleCall {
  const call = {
    tenantId,
    point: options.point ?? "tool.call",
    eventJson: JSON.stringify(options.event ?? TOOL_CALL_EVENT),
    ctxJson: ctxJson(tenantId, bundle, options.state, options.config),
    timeoutMs: options.timeoutMs ?? EXECUTOR_TIMEOUT,
  };
  return [bundle, call];
}

/** A healthy bundle: blocks `rm`, rewrites nothing else, counts its calls in state. */
export const HEALTHY = hooksBundle(`{
  toolCall(event, ctx) {
    ctx.state.calls = (ctx.state.calls || 0) + 1;
    return { type: "block", reason: "healthy:" + event.call.name };
  },
}`);
