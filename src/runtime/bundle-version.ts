import type { ActiveBundle, BundleRef, BundleSource, TenantId } from "../protocol/index.js";
import { type BundleStore, StoreError } from "../store/index.js";
import { RuntimeError } from "./errors.js";

/**
 * The bundle a checkpointed run used, by version, whatever is active now: from the source's `atVersion`,
 * or a store's `version` and `bundle`. Throws `RuntimeError` `checkpoint_bundle` when it is gone or is no
 * longer the same bundle (another hash).
 */
export async function bundleAt(
  source: BundleSource | undefined,
  tenantId: TenantId,
  ref: BundleRef,
  signal: AbortSignal,
): Promise<ActiveBundle> {
  let bundle: ActiveBundle | undefined;
  if (source?.atVersion !== undefined) bundle = await source.atVersion(tenantId, ref.version, signal);
  else if (isStore(source)) bundle = await fromStore(source, tenantId, ref.version, signal);
  else if (source !== undefined) {
    throw new RuntimeError(
      "checkpoint_bundle",
      `The runtime's bundle source cannot serve version ${ref.version} of tenant ${tenantId} (no \`atVersion\`): give the runtime the store, or a source with \`atVersion\``,
    );
  }
  if (bundle === undefined) {
    throw new RuntimeError(
      "checkpoint_bundle",
      `The checkpoint ran on version ${ref.version} of tenant ${tenantId}, which the runtime's bundle source no longer has; the run cannot resume on another version`,
    );
  }
  if (bundle.manifest.hash !== ref.hash) {
    throw new RuntimeError(
      "checkpoint_bundle",
      `Version ${ref.version} of tenant ${tenantId} is now bundle ${bundle.manifest.hash}, not ${ref.hash} that the checkpoint ran on; the run cannot resume on another bundle`,
    );
  }
  return bundle;
}

/**
 * The checkpointed run's bundle with the tenant's candidate in shadow mode now, if any: a resumed run is live
 * traffic and is shadowed like any other (its candidate's `ctx.state` comes back from the checkpoint, by
 * version). A source that cannot say now (an outage) resumes the run unshadowed: the shadow never decides.
 */
export async function withShadowNow(
  source: BundleSource | undefined,
  bundle: ActiveBundle,
  signal: AbortSignal,
): Promise<ActiveBundle> {
  const shadow = await source?.active(bundle.tenantId, signal).then(
    (active) => active?.shadow,
    () => undefined,
  );
  signal.throwIfAborted();
  return shadow === undefined ? bundle : { ...bundle, shadow };
}

function isStore(source: BundleSource | undefined): source is BundleStore {
  const s = source as Partial<BundleStore> | undefined;
  return typeof s?.version === "function" && typeof s.bundle === "function";
}

async function fromStore(
  store: BundleStore,
  tenantId: TenantId,
  version: number,
  signal: AbortSignal,
): Promise<ActiveBundle | undefined> {
  try {
    const detail = await store.version(tenantId, version, signal);
    if (detail === undefined) return undefined;
    const stored = await store.bundle(detail.hash, signal);
    if (stored === undefined) return undefined;
    return {
      tenantId,
      version,
      code: stored.code,
      ...(stored.sourceMap === null ? {} : { sourceMap: stored.sourceMap }),
      manifest: detail.manifest,
      config: detail.config,
    };
  } catch (error) {
    if (error instanceof StoreError && error.code === "not_found") return undefined;
    throw error;
  }
}
