import { buildBundle } from "../bundler/index.js";
import type { ActiveBundle, BundleSource, HookExecutor, JsonValue } from "../protocol/index.js";
import { TenantId } from "../protocol/index.js";
import { RuntimeError } from "./errors.js";

/** A bundle source that serves the bundles it was given, one per tenant (tests, scenarios, the demo). */
export function fixedBundleSource(bundles: readonly ActiveBundle[]): BundleSource {
  const byTenant = new Map<string, ActiveBundle>();
  for (const bundle of bundles) {
    if (byTenant.has(bundle.tenantId)) {
      throw new RuntimeError("invalid_options", `Two bundles for tenant ${bundle.tenantId}; give each tenant one`);
    }
    byTenant.set(bundle.tenantId, bundle);
  }
  return {
    async active(tenantId, signal) {
      signal?.throwIfAborted();
      return byTenant.get(tenantId);
    },
    async atVersion(tenantId, version, signal) {
      signal?.throwIfAborted();
      const bundle = byTenant.get(tenantId);
      return bundle?.version === version ? bundle : undefined;
    },
  };
}

export interface EntryBundleOptions {
  readonly tenantId: string;
  /** Evaluates the bundle (in the sandbox) to read its hook points; the caller owns it. */
  readonly executor: HookExecutor;
  /** The version number reported in `ctx.bundle` and the trace; default 1. */
  readonly version?: number;
  /** `ctx.config`; default `null`. */
  readonly config?: JsonValue;
  /** The hook folder the entry may draw files from (default: the entry's folder): see `BundleOptions.root`. */
  readonly root?: string;
  readonly signal?: AbortSignal;
}

/**
 * Bundles a hook entry (a folder with index.ts, or a file) into an active bundle without a store: what
 * `isohook run` does for a scenario's `hook`. Throws `BundleError` for anything wrong with the module.
 */
export async function bundleFromEntry(entry: string, options: EntryBundleOptions): Promise<ActiveBundle> {
  const tenantId = TenantId.safeParse(options.tenantId);
  if (!tenantId.success) {
    throw new RuntimeError("invalid_run", `Expected \`tenantId\` to be a tenant id, got \`${options.tenantId}\``);
  }
  const built = await buildBundle(entry, {
    executor: options.executor,
    ...(options.root !== undefined ? { root: options.root } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return {
    tenantId: tenantId.data,
    version: options.version ?? 1,
    code: built.code,
    sourceMap: built.sourceMap,
    manifest: built.manifest,
    config: options.config ?? null,
  };
}
