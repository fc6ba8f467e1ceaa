export { type BuildOptions, buildBundle, type HookBundle } from "./build-bundle.js";
export { BundleError, type BundleErrorCode, type BundleProblem } from "./bundle-error.js";
export { BUNDLE_GLOBAL, type BuiltBundle, type BundleOptions, bundleHook } from "./bundle-hook.js";
export { type DescribeOptions, describeBundle } from "./describe-bundle.js";
export { SDK_SPECIFIER } from "./guard-plugin.js";
export { suggestHandler } from "./handler-names.js";
