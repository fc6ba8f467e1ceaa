import {
  type BundleManifest,
  type HookExecutor,
  hookPointOfHandler,
  isToolPoint,
  SDK_VERSION,
  TenantId,
  type ToolMatchers,
} from "../protocol/index.js";
import { BundleError, headlineOf } from "./bundle-error.js";
import type { CompiledHook } from "./compile-hook.js";
import { checkHandlers } from "./handler-names.js";

export interface DescribeOptions {
  /** The tenant the sandbox evaluates the bundle for (it only picks the worker). Default: `isohook-bundler`. */
  readonly tenantId?: TenantId | undefined;
  readonly signal?: AbortSignal | undefined;
}

const BUNDLER_TENANT = TenantId.parse("isohook-bundler");

/**
 * Lists the hook points a bundle exports, and the tool matchers of its handlers, by evaluating it in the
 * sandbox (`executor.describe`): the host never runs tenant code. Every key of the default export must be a
 * handler (the camelCase of a hook point) whose value is a function or, at a tool point, `{ tools, handler }`;
 * `observe` holds observe-only handlers in the same forms.
 *
 * @throws {BundleError} `unknown_handler` (listing the valid names, with a did-you-mean); `invalid_export`
 *   when the default export is no object or holds a non-function; `describe_failed` when the bundle throws,
 *   times out or the sandbox is unavailable while loading it.
 */
export async function describeBundle(
  built: CompiledHook,
  executor: HookExecutor,
  options: DescribeOptions = {},
): Promise<BundleManifest> {
  const outcome = await executor.describe(
    options.tenantId ?? BUNDLER_TENANT,
    { hash: built.hash, code: built.code },
    options.signal,
  );
  if (outcome.type === "failed") {
    // invalid_result: the sandbox loaded the bundle and found its default export wrong (not an object, a
    // key that is no function, too many keys); anything else kept it from loading at all.
    const code = outcome.failure.code === "invalid_result" ? "invalid_export" : "describe_failed";
    throw new BundleError(code, `Cannot use ${built.entry}: ${headlineOf(code)}`, [
      { message: `${outcome.failure.message} (${outcome.failure.code})` },
    ]);
  }
  const checked = checkHandlers(outcome.handlers);
  const observed = outcome.observe === undefined ? undefined : checkHandlers(outcome.observe.handlers, "observe.");
  const unknown = [...checked.unknown, ...(observed?.unknown ?? [])];
  if (unknown.length > 0) {
    throw new BundleError("unknown_handler", `Cannot use ${built.entry}: ${headlineOf("unknown_handler")}`, unknown);
  }
  const tools = matchersOf(outcome.tools);
  const observeTools = matchersOf(outcome.observe?.tools);
  return {
    hash: built.hash,
    bytes: built.bytes,
    hookPoints: checked.hookPoints,
    ...(tools === undefined ? {} : { tools }),
    ...(observed === undefined
      ? {}
      : {
          observe: { hookPoints: observed.hookPoints, ...(observeTools === undefined ? {} : { tools: observeTools }) },
        }),
    sdkVersion: SDK_VERSION,
    entry: built.entry,
  };
}

/** Globs by handler key as the manifest keeps them, by point; undefined when no handler has any. */
function matchersOf(byHandler: Readonly<Record<string, string[]>> | undefined): ToolMatchers | undefined {
  if (byHandler === undefined) return undefined;
  const matchers: ToolMatchers = {};
  let any = false;
  for (const [handler, globs] of Object.entries(byHandler)) {
    const point = hookPointOfHandler(handler);
    if (point === undefined || !isToolPoint(point)) continue;
    matchers[point] = globs;
    any = true;
  }
  return any ? matchers : undefined;
}
