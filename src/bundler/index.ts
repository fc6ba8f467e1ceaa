export { type BuildOptions, buildBundle, type HookBundle } from "./build-bundle.js";
export { BundleError, type BundleErrorCode, type BundleProblem } from "./bundle-error.js";
export { BUNDLE_GLOBAL, type BundleOptions, type CompiledHook, compileHook } from "./compile-hook.js";
export { isInside } from "./containment.js";
export { type DescribeOptions, describeBundle } from "./describe-bundle.js";
export { type ResolvedEntry, resolveEntry } from "./entry.js";
export { SDK_SPECIFIER } from "./guard-plugin.js";
export { suggestHandler } from "./handler-names.js";
export {
  type FolderBounds,
  HookFileError,
  type HookFileErrorCode,
  type ReadHookFileOptions,
  readHookFile,
} from "./hook-file.js";
export { type OperatorFileOptions, readOperatorFile } from "./operator-file.js";
