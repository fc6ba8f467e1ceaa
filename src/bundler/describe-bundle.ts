import { type BundleManifest, type HookExecutor, SDK_VERSION, TenantId } from "../protocol/index.js";
import { BundleError, headlineOf } from "./bundle-error.js";
import type { BuiltBundle } from "./bundle-hook.js";
import { checkHandlers, type ExportedKey } from "./handler-names.js";

export interface DescribeOptions {
  /** The tenant the sandbox evaluates the bundle for (it only picks the worker). Default: `isohook-bundler`. */
  readonly tenantId?: TenantId;
  readonly signal?: AbortSignal;
}

const BUNDLER_TENANT = TenantId.parse("isohook-bundler");

/**
 * Lists the hook points a bundle exports by evaluating it in the sandbox (`executor.describe`): the host
 * never runs tenant code. Every key of the default export must be a handler (the camelCase of a hook
 * point) whose value is a function.
 *
 * @throws {BundleError} `unknown_handler` (listing the valid names, with a did-you-mean), `invalid_handler`,
 *   or `describe_failed` when the bundle throws, times out or exports no object while loading.
 */
export async function describeBundle(
  built: BuiltBundle,
  executor: HookExecutor,
  options: DescribeOptions = {},
): Promise<BundleManifest> {
  const outcome = await executor.describe(
    options.tenantId ?? BUNDLER_TENANT,
    { hash: built.hash, code: built.code },
    options.signal,
  );
  if (outcome.type === "failed") {
    throw new BundleError("describe_failed", `Cannot use ${built.entry}: ${headlineOf("describe_failed")}`, [
      { message: `${outcome.failure.code}: ${outcome.failure.message}` },
    ]);
  }
  const keys: ExportedKey[] = outcome.handlers.map((key) => ({ key }));
  const checked = checkHandlers(keys);
  if (checked.code !== undefined) {
    throw new BundleError(checked.code, `Cannot use ${built.entry}: ${headlineOf(checked.code)}`, checked.problems);
  }
  return {
    hash: built.hash,
    bytes: built.bytes,
    hookPoints: checked.hookPoints,
    sdkVersion: SDK_VERSION,
    entry: built.entry,
  };
}
