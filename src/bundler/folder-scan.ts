import type { Dirent } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { isInside } from "./containment.js";
import { toPosix } from "./entry.js";
import { type FolderBounds, fileKind, HookFileError, leavesFolder } from "./hook-file.js";

/** Most entries a hook folder may hold, node_modules included: a scan of a wrong root ends here. */
export const MAX_FOLDER_ENTRIES = 100_000;

/**
 * Walks the whole hook folder without following links, before esbuild sees it: esbuild reads some files
 * itself (every `package.json` on a resolution path), so a FIFO there would hang the build and a symlink
 * would make it read a host file. Refuses any FIFO, socket or device node, and any symlink that leads
 * outside the folder or to such a file, naming it. Dangling links are left to resolution to report.
 *
 * @throws {HookFileError} `not_a_file`, `outside_folder`, or `file_too_large` past `MAX_FOLDER_ENTRIES`.
 */
export async function scanHookFolder(folder: FolderBounds, cwd: string): Promise<void> {
  const shown = (path: string) => toPosix(relative(cwd, path));
  const pending = [folder.root];
  let seen = 0;
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue; // Unreadable folders: esbuild cannot read them either, and says so if it needs them.
    }
    seen += entries.length;
    if (seen > MAX_FOLDER_ENTRIES) {
      throw new HookFileError(
        "file_too_large",
        folder.shown,
        `${folder.shown} holds more than ${MAX_FOLDER_ENTRIES.toLocaleString("en-US")} files and folders: that is no hook folder. Pass the hook's own folder (or a smaller --root).`,
      );
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isSymbolicLink()) await checkLink(path, folder, shown(path));
      else if (!entry.isFile()) {
        const info = await stat(path);
        throw new HookFileError(
          "not_a_file",
          shown(path),
          `${shown(path)} is ${fileKind(info)}: a hook folder may hold only regular files, folders and links inside it. Remove it.`,
        );
      }
    }
  }
}

async function checkLink(path: string, folder: FolderBounds, shown: string): Promise<void> {
  const target = await realpath(path).catch(() => undefined);
  if (target === undefined) return;
  if (!isInside(folder.root, target)) throw leavesFolder(shown, folder);
  const info = await stat(target);
  if (!info.isFile() && !info.isDirectory()) {
    throw new HookFileError(
      "not_a_file",
      shown,
      `${shown} links to ${fileKind(info)}: a hook folder may hold only regular files, folders and links inside it. Remove it.`,
    );
  }
}
