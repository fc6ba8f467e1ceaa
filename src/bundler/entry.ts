import { realpath, stat } from "node:fs/promises";
import { join, relative, resolve, sep } from "node:path";
import { BundleError, headlineOf } from "./bundle-error.js";

/** A hook entry, found on disk. */
export interface ResolvedEntry {
  /** The entry file's real absolute path (symlinks resolved, so output paths do not depend on them). */
  readonly file: string;
  /** The entry as the user named it, relative to their cwd, `/`-separated: recorded in the manifest. */
  readonly display: string;
  /** The caller's cwd, real path: problems name files relative to it. */
  readonly cwd: string;
}

/** Resolves `entry` (a file, or a folder containing index.ts) against `cwd`. */
export async function resolveEntry(entry: string, cwd: string): Promise<ResolvedEntry> {
  const absolute = resolve(cwd, entry);
  const realCwd = await realpath(cwd).catch(() => resolve(cwd));
  const display = toPosix(relative(cwd, absolute)) || ".";
  const info = await stat(absolute).catch(() => undefined);
  if (info === undefined) {
    throw new BundleError("entry_not_found", `Cannot bundle ${display}: ${headlineOf("entry_not_found")}`, [
      { message: `No file or folder at ${absolute}. Pass a hook's .ts file or a folder containing index.ts.` },
    ]);
  }
  let file = absolute;
  if (info.isDirectory()) {
    file = join(absolute, "index.ts");
    const index = await stat(file).catch(() => undefined);
    if (!index?.isFile()) {
      throw new BundleError("entry_not_found", `Cannot bundle ${display}: the folder has no index.ts`, [
        { message: `Add ${toPosix(join(display, "index.ts"))} exporting your hooks, or pass the entry file itself.` },
      ]);
    }
  } else if (!info.isFile()) {
    throw new BundleError("entry_not_found", `Cannot bundle ${display}: the entry is not a file or folder`, [
      { message: "Pass a hook's .ts file or a folder containing index.ts." },
    ]);
  }
  return { file: await realpath(file), display, cwd: realCwd };
}

export function toPosix(path: string): string {
  return sep === "/" ? path : path.split(sep).join("/");
}
