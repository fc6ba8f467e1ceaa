import { z } from "zod";
import { HOOK_POINT_NAMES, type HookPoint } from "./hook-points.js";
import { BundleHash, type TenantId } from "./ids.js";
import type { JsonValue } from "./json.js";

/**
 * What the bundler records about a bundle: the store persists it and the host reads `hookPoints` to skip
 * points a bundle does not export without crossing into the sandbox.
 */
export const BundleManifest = z.strictObject({
  hash: BundleHash,
  bytes: z.number().int().nonnegative(),
  hookPoints: z.array(z.enum(HOOK_POINT_NAMES as [HookPoint, ...HookPoint[]])),
  sdkVersion: z.string(),
  /** The entry the bundle was built from, relative to where the bundler ran (for operators, not for lookup). */
  entry: z.string(),
});
export type BundleManifest = z.infer<typeof BundleManifest>;

/** A tenant's bundle as the runtime serves it: one version, immutable. */
export interface ActiveBundle {
  readonly tenantId: TenantId;
  readonly version: number;
  readonly code: string;
  readonly sourceMap?: string;
  readonly manifest: BundleManifest;
  /** The tenant's config for this bundle, handed to hooks as `ctx.config`. */
  readonly config: JsonValue;
  /**
   * A percentage rollout in progress: `percent` of the tenant's runs (a stable share, by a hash of the run
   * id) use `bundle` instead of this one. Set only on what `BundleSource.active` returns.
   */
  readonly rollout?: { readonly bundle: ActiveBundle; readonly percent: number };
  /** A candidate in shadow mode: it runs after this one on live calls and never decides anything. */
  readonly shadow?: ActiveBundle;
}

/**
 * Where the runtime gets a tenant's active bundle (with its rollout and shadow candidates, if any). The store implements it (with caching and pick-up of
 * activations made by other processes); tests and `isohook run --hook <entry>` pass a fixed one.
 */
export interface BundleSource {
  active(tenantId: TenantId, signal?: AbortSignal): Promise<ActiveBundle | undefined>;
}
