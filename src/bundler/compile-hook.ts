import { createHash } from "node:crypto";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Message, type Metafile, type Plugin } from "esbuild";
import { BundleHash, DEFAULT_LIMITS } from "../protocol/index.js";
import { BundleError, type BundleErrorCode, type BundleProblem, headlineOf } from "./bundle-error.js";
import { findComputedLoads } from "./computed-loads.js";
import { containmentPlugin } from "./containment.js";
import { resolveEntry, toPosix } from "./entry.js";
import { mapEsbuildErrors } from "./esbuild-messages.js";
import { scanHookFolder } from "./folder-scan.js";
import { guardPlugin } from "./guard-plugin.js";
import { HookFileError } from "./hook-file.js";
import { tsconfigOf } from "./tsconfig.js";

/** The global the bundle script leaves its module namespace in (contracts §1); the prelude deletes it. */
export const BUNDLE_GLOBAL = "__isohook_bundle";

/** hook-sdk.ts beside this source, hook-sdk.js beside the compiled dist/ file. */
const SDK_FILE = fileURLToPath(new URL(`../../sandbox/guest/hook-sdk.${import.meta.url.slice(-2)}`, import.meta.url));
/** The generated entry: it re-exports only the hook module's default export (the hooks object). */
const WRAPPER_FILE = "isohook-entry.js";
/** Never written (`write: false`); it only anchors the source map's relative `sources`. */
const OUT_FILE = "__isohook_bundle.js";

export interface BundleOptions {
  /** Largest bundle accepted, in UTF-8 bytes. Default: `DEFAULT_LIMITS.maxBundleBytes` (1 MiB). */
  readonly maxBundleBytes?: number | undefined;
  /** Where a relative `entry` is resolved from and problems' file names are relative to. Default: `process.cwd()`. */
  readonly cwd?: string | undefined;
  /**
   * The hook folder: every file the bundle includes must resolve (symlinks followed) inside it, its own
   * node_modules included, so tenant source cannot pull host files into its bundle. Relative to `cwd`.
   * Default: the entry's folder (the entry itself when it is a folder), never a folder above it. Give a
   * wider one only when the whole of it is the tenant's (hooks that share code with sibling folders).
   */
  readonly root?: string | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** One hook module as one classic script for the isolate, plus its external source map. */
export interface CompiledHook {
  readonly code: string;
  readonly sourceMap: string;
  /** `sha256-<hex>` of `code`. */
  readonly hash: BundleHash;
  /** UTF-8 size of `code`. */
  readonly bytes: number;
  /** The entry as given, relative to cwd. */
  readonly entry: string;
}

/**
 * Bundles a hook module (a file, or a folder containing index.ts) into one script that, evaluated in an
 * isolate, leaves the module namespace in `__isohook_bundle` (its `default` is the hooks object).
 * Refuses Node built-ins, `import()`, computed `require()`, top-level `await`, a missing default export
 * and a bundle over `maxBundleBytes`, each with the file:line that made it. Output is deterministic: paths
 * in code and map are relative to the entry's folder, so the same source has the same hash anywhere.
 *
 * @example
 * const built = await compileHook("hooks/block-destructive-shell");
 * built.hash; // "sha256-…"
 * @throws {BundleError} for anything wrong with the hook module.
 */
export async function compileHook(entry: string, options: BundleOptions = {}): Promise<CompiledHook> {
  const { signal } = options;
  signal?.throwIfAborted();
  const maxBundleBytes = options.maxBundleBytes ?? DEFAULT_LIMITS.maxBundleBytes;
  if (!Number.isInteger(maxBundleBytes) || maxBundleBytes < 1) {
    throw new RangeError(`Expected \`maxBundleBytes\` to be an integer from 1 and up, got \`${maxBundleBytes}\``);
  }
  const resolved = await resolveEntry(entry, options.cwd ?? process.cwd(), options.root);
  const workDir = dirname(resolved.file);
  const entryFile = toPosix(relative(resolved.cwd, resolved.file));
  const context = { workDir, cwd: resolved.cwd, wrapperFile: WRAPPER_FILE, entryFile };
  const failed = (code: BundleErrorCode, problems: BundleProblem[]): BundleError =>
    new BundleError(code, `Cannot bundle ${resolved.display}: ${headlineOf(code)}${more(problems.length)}`, problems);

  let result: Awaited<ReturnType<typeof runEsbuild>>;
  try {
    await scanHookFolder(resolved.folder, resolved.cwd);
    const tsconfig = await tsconfigOf(resolved.folder, resolved.cwd);
    const plugins = [guardPlugin(SDK_FILE), containmentPlugin(resolved.folder, resolved.cwd)];
    result = await runEsbuild(resolved.file, workDir, tsconfig, plugins);
  } catch (error) {
    if (error instanceof HookFileError) {
      throw failed(error.code === "outside_folder" ? "outside_root" : "unsafe_file", [{ message: error.message }]);
    }
    if (!isBuildFailure(error)) throw error;
    const { code, problems } = mapEsbuildErrors(error.errors, context);
    throw failed(code, problems);
  }
  signal?.throwIfAborted();

  const code = result.outputFiles.find((f) => f.path.endsWith(".js"))?.text ?? "";
  const sourceMap = result.outputFiles.find((f) => f.path.endsWith(".map"))?.text ?? "";
  const [firstLoad, ...moreLoads] = findComputedLoads(code, sourceMap, workDir, resolved.cwd);
  if (firstLoad !== undefined) {
    throw failed(
      firstLoad.code,
      [firstLoad, ...moreLoads].map((l) => l.problem),
    );
  }

  const bytes = Buffer.byteLength(code, "utf8");
  if (bytes > maxBundleBytes) {
    throw failed("bundle_too_large", [
      {
        message: `The bundle is ${bytes.toLocaleString("en-US")} bytes, over the ${maxBundleBytes.toLocaleString("en-US")}-byte limit (maxBundleBytes). Largest inputs: ${largestInputs(result.metafile, context)}. Drop or replace large dependencies.`,
      },
    ]);
  }
  const hash = BundleHash.parse(`sha256-${createHash("sha256").update(code).digest("hex")}`);
  return { code, sourceMap, hash, bytes, entry: resolved.display };
}

function runEsbuild(
  file: string,
  workDir: string,
  tsconfigRaw: { compilerOptions: Record<string, unknown> },
  plugins: Plugin[],
) {
  return build({
    tsconfigRaw,
    stdin: {
      contents: `export { default } from ${JSON.stringify(`./${basename(file)}`)};\n`,
      resolveDir: workDir,
      sourcefile: WRAPPER_FILE,
      loader: "js",
    },
    absWorkingDir: workDir,
    outfile: join(workDir, OUT_FILE),
    write: false,
    bundle: true,
    format: "iife",
    globalName: BUNDLE_GLOBAL,
    platform: "neutral",
    mainFields: ["module", "main"],
    target: "es2022",
    // Lowered so no `import()` reaches V8's module loader; computed ones are refused after the build.
    supported: { "dynamic-import": false },
    define: { "process.env.NODE_ENV": '"production"' },
    sourcemap: "external",
    sourcesContent: true,
    metafile: true,
    logLevel: "silent",
    plugins,
  });
}

function isBuildFailure(error: unknown): error is Error & { errors: Message[] } {
  return error instanceof Error && Array.isArray((error as { errors?: unknown }).errors);
}

function largestInputs(metafile: Metafile, context: { workDir: string; cwd: string }): string {
  const output = Object.values(metafile.outputs).find((o) => o.entryPoint !== undefined);
  const inputs = Object.entries(output?.inputs ?? {})
    .filter(([path]) => path !== WRAPPER_FILE)
    .sort(([, a], [, b]) => b.bytesInOutput - a.bytesInOutput)
    .slice(0, 3);
  return inputs
    .map(([path, { bytesInOutput }]) => {
      const name = path.includes(":") ? path : toPosix(relativeTo(context, path));
      return `${name} (${bytesInOutput.toLocaleString("en-US")} bytes)`;
    })
    .join(", ");
}

function relativeTo(context: { workDir: string; cwd: string }, path: string): string {
  return relative(context.cwd, resolve(context.workDir, path));
}

function more(problems: number): string {
  if (problems <= 1) return "";
  return ` (${problems} problems)`;
}
