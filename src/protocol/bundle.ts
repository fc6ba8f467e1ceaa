import { z } from "zod";
import { HOOK_POINT_NAMES, type HookPoint } from "./hook-points.js";
import { BundleHash, type TenantId } from "./ids.js";
import type { JsonValue } from "./json.js";
import { ToolMatchers } from "./tool-matchers.js";

const HookPointName = z.enum(HOOK_POINT_NAMES as [HookPoint, ...HookPoint[]]);

/**
 * What the bundler records about a bundle: the store persists it and the host reads `hookPoints`, `tools`
 * and `observe` to skip, without crossing into the sandbox, the points a bundle does not export and the
 * tool calls none of its matchers selects. All of it is read once, at bundle time, in a throwaway isolate
 * (`HookExecutor.describe`): the host never evaluates tenant code, and a handler that changes its
 * `tools` later changes nothing.
 */
export const BundleManifest = z.strictObject({
  hash: BundleHash,
  bytes: z.number().int().nonnegative(),
  /** The points with a decision handler. */
  hookPoints: z.array(HookPointName),
  /** Globs of the decision handlers written `{ tools, handler }`; absent when there is none. */
  tools: ToolMatchers.optional(),
  /** Observe-only handlers (`observe: { toolResult, … }`): their points and matchers; absent when none. */
  observe: z.strictObject({ hookPoints: z.array(HookPointName).min(1), tools: ToolMatchers.optional() }).optional(),
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
  /**
   * One version of the tenant's bundles, active or not: a run resumed from a checkpoint uses the version it
   * started with. Optional: a `BundleStore` serves versions through `version` and `bundle` instead.
   */
  atVersion?(tenantId: TenantId, version: number, signal?: AbortSignal): Promise<ActiveBundle | undefined>;
}
