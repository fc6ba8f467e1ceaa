import { access, realpath } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import type { Plugin } from "esbuild";
import { toPosix } from "./entry.js";
import { refuse } from "./guard-plugin.js";

/** Marks the inner `build.resolve` so the containment callback does not run on its own lookup. */
const INNER = { isohook: "containment" };

/** Whether `path` is `root` or below it (both real, absolute paths). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !rel.startsWith(sep) && !/^[A-Za-z]:/.test(rel));
}

/**
 * The default root of a hook: the nearest folder above the entry holding a package.json (the hook's
 * project), else the entry's own folder. An upload unpacked into a temp folder is thus its own root.
 */
export async function defaultRoot(entryDir: string): Promise<string> {
  for (let dir = entryDir; ; dir = dirname(dir)) {
    if (
      await access(join(dir, "package.json")).then(
        () => true,
        () => false,
      )
    )
      return dir;
    if (dirname(dir) === dir) return entryDir;
  }
}

/**
 * Tenant source is bundled on the host with the operator's file access: without this, `import key from
 * "/srv/app/.env.json"` or a symlink in the hook's folder would copy a host file into the tenant's bundle.
 * Every file a bundle includes must resolve (symlinks followed) inside `root` or inside a node_modules folder.
 */
export function containmentPlugin(root: string, cwd: string): Plugin {
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
        if (isInside(root, path) || path.split(sep).includes("node_modules")) return undefined;
        return refuse(
          "outside_root",
          `\`${args.path}\` resolves to ${toPosix(relative(cwd, path))}, outside the hook's root ${toPosix(relative(cwd, root)) || "."}: a bundle may only include files under its root or in node_modules. Move the file into the hook's folder or widen \`root\`.`,
        );
      });
    },
  };
}
