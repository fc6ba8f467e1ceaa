import { HOOK_POINT_NAMES, handlerOf, maxReplyChars, type SandboxLimits } from "../../src/protocol/index.js";
import { installPrelude, type PreludeConfig } from "../guest/index.js";

/**
 * The prelude as a classic script for `compileScriptSync`: `installPrelude`'s own source (types were erased
 * by the loader that ran this module) called with this bundle's caps. The wrapper function keeps `__name`
 * (esbuild's `keepNames` helper, which tsx injects into function sources) out of the global scope, where
 * it would clash with a bundle's own `var __name`. `"use strict"` matters: module code is strict by
 * nature, a classic script is not.
 */
const SOURCE = installPrelude.toString();

const HANDLERS: Record<string, string> = Object.fromEntries(HOOK_POINT_NAMES.map((p) => [p, handlerOf(p)]));

export function preludeConfig(limits: SandboxLimits): PreludeConfig {
  return {
    maxResultChars: limits.maxResultChars,
    maxStateChars: limits.maxStateChars,
    maxLogLines: limits.maxLogLines,
    maxLogChars: limits.maxLogChars,
    maxReplyChars: maxReplyChars(limits),
    handlers: HANDLERS,
  };
}

const scripts = new Map<string, string>();

/** The script for these limits; the same string object for equal limits, so spares keyed on it match. */
export function preludeScript(limits: SandboxLimits): string {
  const config = JSON.stringify(preludeConfig(limits));
  let script = scripts.get(config);
  if (script === undefined) {
    script = `"use strict";(function () { const __name = (f) => f; return (${SOURCE})(${config}); })();`;
    if (scripts.size < 64) scripts.set(config, script);
  }
  return script;
}
