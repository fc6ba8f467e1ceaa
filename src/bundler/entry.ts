import { realpath, stat } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { BundleError, headlineOf } from "./bundle-error.js";
import { isInside } from "./containment.js";
import { type FolderBounds, fileKind } from "./hook-file.js";

/** A hook entry, found on disk, and the folder it may draw files from. */
export interface ResolvedEntry {
  /** The entry file's real absolute path (symlinks resolved, so output paths do not depend on them). */
  readonly file: string;
  /** The entry as the user named it, relative to their cwd, `/`-separated: recorded in the manifest. */
  readonly display: string;
  /** The caller's cwd, real path: problems name files relative to it. */
  readonly cwd: string;
  /** The folder the entry was named in (the entry itself when it is a folder), absolute, as named: its fixtures.jsonl is there. */
  readonly dir: string;
  /**
   * The hook folder, the bundle's root: the entry's own folder (the entry itself when it is a folder), or
   * the `root` the caller gave. Never a folder above it found by looking for a package.json.
   */
  readonly folder: FolderBounds;
}

/**
 * Resolves `entry` (a file, or a folder containing index.ts) against `cwd`, with `root` (relative to
 * `cwd`) as its folder if given. The entry must resolve inside the folder: an `index.ts` that is a
 * symlink to another tenant's hook is refused, not bundled from where it points.
 */
export async function resolveEntry(entry: string, cwd: string, root?: string): Promise<ResolvedEntry> {
  const absolute = resolve(cwd, entry);
  const realCwd = await realpath(cwd).catch(() => resolve(cwd));
  const display = toPosix(relative(cwd, absolute)) || ".";
  const fail = (headline: string, message: string) =>
    new BundleError("entry_not_found", `Cannot bundle ${display}: ${headline}`, [{ message }]);
  const info = await stat(absolute).catch(() => undefined);
  if (info === undefined) {
    throw fail(
      headlineOf("entry_not_found"),
      `No file or folder at ${absolute}. Pass a hook's .ts file or a folder containing index.ts.`,
    );
  }
  if (!info.isDirectory() && !info.isFile()) {
    throw fail("the entry is not a file or folder", "Pass a hook's .ts file or a folder containing index.ts.");
  }
  const named = info.isDirectory() ? join(absolute, "index.ts") : absolute;
  const folderPath = root === undefined ? dirname(named) : resolve(cwd, root);
  const folder = await boundsOf(folderPath, toPosix(relative(cwd, folderPath)) || ".", display);
  const file = await realpath(named).catch(() => undefined);
  if (file === undefined) {
    throw fail(
      "the folder has no index.ts",
      `Add ${toPosix(join(display, "index.ts"))} exporting your hooks, or pass the entry file itself.`,
    );
  }
  const which = toPosix(relative(cwd, named));
  const target = await stat(file);
  if (!target.isFile()) {
    throw fail("the entry is not a regular file", `${which} is ${fileKind(target)}: pass a hook's .ts file.`);
  }
  if (!isInside(folder.root, file)) {
    const message =
      root === undefined
        ? `${which} leads outside the hook folder ${folder.shown} (a symbolic link): isohook bundles only files inside it. Replace the link with the file itself.`
        : `The entry is not under the root ${root}. Pass a root that contains the hook.`;
    throw new BundleError("outside_root", `Cannot bundle ${display}: ${headlineOf("outside_root")}`, [{ message }]);
  }
  return { file, display, cwd: realCwd, dir: dirname(named), folder };
}

async function boundsOf(path: string, shown: string, display: string): Promise<FolderBounds> {
  const root = await realpath(path).catch(() => undefined);
  const info = root === undefined ? undefined : await stat(root);
  if (root === undefined || !info?.isDirectory()) {
    throw new BundleError("entry_not_found", `Cannot bundle ${display}: the root is not a folder`, [
      { message: `No folder at ${path}. Pass the hook's folder as the root.` },
    ]);
  }
  return { root, device: info.dev, shown };
}

export function toPosix(path: string): string {
  return sep === "/" ? path : path.split(sep).join("/");
}
