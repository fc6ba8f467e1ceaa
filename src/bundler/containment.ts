import { realpath } from "node:fs/promises";
import { dirname, relative, resolve, sep } from "node:path";
import type { Loader, OnLoadResult, Plugin } from "esbuild";
import { toPosix } from "./entry.js";
import { refuse } from "./guard-plugin.js";
import { type FolderBounds, HookFileError, readHookFile } from "./hook-file.js";

/** Marks the inner `build.resolve` so the containment callback does not run on its own lookup. */
const INNER = { isohook: "containment" };

/** Largest source file the bundler reads (the bundle itself is capped separately). */
export const MAX_SOURCE_BYTES = 16 * 1024 * 1024;

/** Whether `path` is `root` or below it (both real, absolute paths). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !rel.startsWith(sep) && !/^[A-Za-z]:/.test(rel));
}

/**
 * Tenant source is bundled on the host with the operator's file access: without this, `import key from
 * "/srv/app/.env.json"`, a symlink in the hook's folder, a package in a node_modules above it or a source
 * map comment would copy a host file into the tenant's bundle. Every file a bundle includes must resolve
 * (symlinks followed) inside the hook folder (its own node_modules included) and is read by `readHookFile`
 * (a regular file, one name, the folder's device, at most 16 MiB). Its `sourceMappingURL` comment is
 * overridden: esbuild would read the map it names from anywhere and copy its sources into the bundle's map.
 */
export function containmentPlugin(folder: FolderBounds, cwd: string): Plugin {
  const shown = (path: string) => toPosix(relative(cwd, path));
  return {
    name: "isohook-containment",
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === INNER || args.kind === "entry-point" || args.namespace !== "file") return undefined;
        const found = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          namespace: args.namespace,
          pluginData: INNER,
        });
        // Unresolvable or not a file: esbuild's own resolution reports it, with its location.
        if (found.errors.length > 0 || found.external || found.namespace !== "file" || found.path === "")
          return undefined;
        const path = await realpath(found.path).catch(() => found.path);
        if (isInside(folder.root, path)) return undefined;
        const fix = /^[./]/.test(args.path)
          ? "Move the file into the hook folder, or pass a --root that holds both if all of it is the tenant's."
          : "Install the package in the hook folder's own node_modules.";
        return refuse(
          "outside_root",
          `\`${args.path}\` resolves to ${shown(path)}, outside the hook folder ${folder.shown}: a bundle may only include files inside it. ${fix}`,
        );
      });
      build.onLoad({ filter: /.*/, namespace: "file" }, async (args): Promise<OnLoadResult> => {
        const extension = /\.([^./\\]+)$/.exec(args.path)?.[1]?.toLowerCase() ?? "";
        const loader = LOADERS[extension];
        if (loader === undefined) {
          const text = `${shown(args.path)}: a hook may include only ${Object.keys(LOADERS)
            .map((e) => `.${e}`)
            .join(", ")} files. Remove the import.`;
          return { errors: [{ text, detail: { isohook: "unsafe_file" } }] };
        }
        try {
          const text = await readHookFile(args.path, { shown: shown(args.path), maxBytes: MAX_SOURCE_BYTES, folder });
          const contents = loader === "json" || loader === "text" ? text : withoutSourceMap(text);
          return { contents, loader, resolveDir: dirname(resolve(args.path)) };
        } catch (error) {
          if (!(error instanceof HookFileError)) throw error;
          const code = error.code === "outside_folder" ? "outside_root" : "unsafe_file";
          return { errors: [{ text: error.message, detail: { isohook: code } }] };
        }
      });
    },
  };
}

/** The loader for each extension a hook may include (esbuild's defaults); anything else is refused. */
const LOADERS: Readonly<Record<string, Loader>> = {
  ts: "ts",
  mts: "ts",
  cts: "ts",
  tsx: "tsx",
  js: "js",
  mjs: "js",
  cjs: "js",
  jsx: "jsx",
  json: "json",
  txt: "text",
};

/**
 * The file with a last `sourceMappingURL` comment that esbuild takes instead of any earlier one (the last
 * wins): an empty inline map, so the file maps to itself. Telling a comment from a string would need a
 * parser, and a map inside the folder is only worth keeping for stack traces into packages: not kept.
 */
function withoutSourceMap(text: string): string {
  if (!text.includes("sourceMappingURL")) return text;
  return `${text}\n//# sourceMappingURL=data:application/json,{}\n`;
}
