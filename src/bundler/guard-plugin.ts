import { readFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { dirname } from "node:path";
import type { OnResolveArgs, OnResolveResult, PartialMessage, Plugin } from "esbuild";
import type { BundleErrorCode } from "./bundle-error.js";

/** The specifier hook modules import the SDK by; aliased to sandbox/guest/hook-sdk.ts. */
export const SDK_SPECIFIER = "isohook/hook-sdk";

/**
 * The SDK is loaded in its own namespace so its path in the bundle and its source map is `isohook:hook-sdk`
 * wherever isohook is installed: the same hook source gives the same bundle hash on every machine.
 */
const SDK_NAMESPACE = "isohook";

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** `node:` anything, and every bare built-in name this Node knows (`fs`, `fs/promises`, `child_process`, …). */
const BUILTIN_FILTER = new RegExp(`^(?:node:.*|${builtinModules.map(escapeRegExp).join("|")})$`);

/** Carried in an esbuild message's `detail` so the bundler maps it back to a code. */
export interface GuardDetail {
  readonly isohook: BundleErrorCode;
}

export function isGuardDetail(detail: unknown): detail is GuardDetail {
  return typeof detail === "object" && detail !== null && typeof (detail as { isohook?: unknown }).isohook === "string";
}

/** An onResolve answer that fails the build at the import, tagged with our code. */
export function refuse(code: BundleErrorCode, text: string): OnResolveResult {
  const error: PartialMessage = { text, detail: { isohook: code } satisfies GuardDetail };
  return { errors: [error] };
}

/**
 * Keeps a bundle isolate-ready: aliases the SDK, refuses Node built-ins and `import()` of a literal path,
 * each at the import that made it (esbuild attaches the location). Computed `import(x)` is caught after
 * the build (see computed-loads.ts).
 */
export function guardPlugin(sdkFile: string): Plugin {
  return {
    name: "isohook",
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args: OnResolveArgs) => {
        if (args.kind !== "dynamic-import") return undefined;
        return refuse(
          "dynamic_import",
          `import(${JSON.stringify(args.path)}) is not supported: hooks cannot load code at run time. Use a static import.`,
        );
      });
      build.onResolve({ filter: /^isohook\/hook-sdk$/ }, () => ({ path: "hook-sdk", namespace: SDK_NAMESPACE }));
      build.onLoad({ filter: /.*/, namespace: SDK_NAMESPACE }, async () => ({
        contents: await readFile(sdkFile, "utf8"),
        loader: "ts",
        resolveDir: dirname(sdkFile),
      }));
      build.onResolve({ filter: BUILTIN_FILTER }, (args: OnResolveArgs) =>
        refuse(
          "node_builtin",
          `\`${args.path}\` is a Node built-in: hooks run in a V8 isolate without Node. Remove the import or use a package that runs without Node.`,
        ),
      );
    },
  };
}
