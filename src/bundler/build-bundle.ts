import type { BundleManifest, HookExecutor } from "../protocol/index.js";
import { type BundleOptions, compileHook } from "./compile-hook.js";
import { type DescribeOptions, describeBundle } from "./describe-bundle.js";

export interface BuildOptions extends BundleOptions, DescribeOptions {
  /** Evaluates the bundle to read its exported hook points; the caller owns (and closes) it. */
  readonly executor: HookExecutor;
}

/** A bundle ready to store and serve: the script, its source map and its manifest. */
export interface HookBundle {
  readonly code: string;
  readonly sourceMap: string;
  readonly manifest: BundleManifest;
}

/**
 * `compileHook` then `describeBundle`: the hook module at `entry` as a script plus the manifest the store
 * records.
 *
 * @example
 * const executor = await createHookExecutor({ workers: 1 });
 * try {
 *   const { code, manifest } = await buildBundle("hooks/redact-secrets", { executor });
 * } finally {
 *   await executor.close();
 * }
 * @throws {BundleError} for anything wrong with the hook module.
 */
export async function buildBundle(entry: string, options: BuildOptions): Promise<HookBundle> {
  const built = await compileHook(entry, options);
  const manifest = await describeBundle(built, options.executor, options);
  return { code: built.code, sourceMap: built.sourceMap, manifest };
}
