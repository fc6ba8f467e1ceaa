import { constants, type Stats } from "node:fs";
import { type FileHandle, open, realpath } from "node:fs/promises";
import { isInside } from "./containment.js";

/** What is wrong with a file read from a hook folder. */
export type HookFileErrorCode =
  | "file_not_found"
  | "outside_folder"
  | "not_a_file"
  | "hard_link"
  | "other_filesystem"
  | "file_too_large"
  | "too_many_lines"
  | "unreadable_file";

/** A file of a hook folder (an entry, a source file, fixtures.jsonl, an events file) that isohook will not read. */
export class HookFileError extends Error {
  override readonly name = "HookFileError";
  readonly code: HookFileErrorCode;
  /** The file as shown to the user (relative to their cwd). */
  readonly file: string;

  constructor(code: HookFileErrorCode, file: string, message: string) {
    super(message);
    this.code = code;
    this.file = file;
  }
}

/** The folder a file must stay in: its real path and the device it is on. */
export interface FolderBounds {
  /** Real absolute path (symlinks resolved). */
  readonly root: string;
  /** `st_dev` of the root: a file on another device is a mount point inside the folder. */
  readonly device: number;
  /** The folder as shown to the user. */
  readonly shown: string;
}

export interface ReadHookFileOptions {
  /** The file as shown to the user (relative to their cwd). */
  readonly shown: string;
  /** Largest file accepted, in bytes. More is `file_too_large`; at most `maxBytes + 1` bytes are read. */
  readonly maxBytes: number;
  /** Most lines accepted (newline-separated, blank ones included); more is `too_many_lines`. Default: no cap. */
  readonly maxLines?: number;
  /**
   * The hook folder the file belongs to: the file must resolve (symlinks followed) inside it, have one
   * name only (no hard link) and be on the folder's device. Without it (a file the operator named
   * outside any hook folder) only type, size and lines are checked.
   */
  readonly folder?: FolderBounds;
}

/**
 * Reads a file of a tenant's hook folder as UTF-8, refusing anything but a regular file of bounded size:
 * it is opened with `O_NONBLOCK` (a FIFO cannot block the open) and `O_NOFOLLOW` on its real path, and
 * checked with `fstat` on the open descriptor before a byte is read, so a FIFO, `/dev/zero`, a socket or a
 * directory fails at once, naming what it is. Hard links are refused inside a folder because their other
 * names cannot be found: one of them may be a host file outside the folder.
 *
 * @throws {HookFileError} saying what is wrong and what to do.
 */
export async function readHookFile(path: string, options: ReadHookFileOptions): Promise<string> {
  const { shown, folder } = options;
  const real = await realpath(path).catch((error: unknown) => {
    throw missingOrUnreadable(error, shown);
  });
  if (folder !== undefined && !isInside(folder.root, real)) throw leavesFolder(shown, folder);
  let handle: FileHandle;
  try {
    handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    // ELOOP: the last component became a symlink after realpath; ENXIO: a socket (or a FIFO without reader).
    if (codeOf(error) === "ELOOP" && folder !== undefined) throw leavesFolder(shown, folder);
    if (codeOf(error) === "ENXIO")
      throw new HookFileError("not_a_file", shown, `${shown} is a socket or a FIFO: ${onlyFiles(folder)}`);
    throw missingOrUnreadable(error, shown);
  }
  try {
    const stats = await handle.stat();
    checkStats(stats, options);
    const text = await readCapped(handle, options);
    if (options.maxLines !== undefined) checkLines(text, options.maxLines, shown);
    return text;
  } finally {
    await handle.close();
  }
}

/** Where the file came from, for messages: a hook folder's, or one the operator named. */
function source(folder: FolderBounds | undefined): string {
  return folder === undefined ? "a file it is given" : "a hook folder file";
}

function onlyFiles(folder: FolderBounds | undefined): string {
  return `isohook reads only regular files${folder === undefined ? "" : " from a hook folder"}. Replace it with a regular file.`;
}

function checkStats(stats: Stats, options: ReadHookFileOptions): void {
  const { shown, folder, maxBytes } = options;
  if (!stats.isFile())
    throw new HookFileError("not_a_file", shown, `${shown} is ${fileKind(stats)}: ${onlyFiles(folder)}`);
  if (folder !== undefined && stats.nlink > 1) {
    throw new HookFileError(
      "hard_link",
      shown,
      `${shown} is a hard link (${stats.nlink} names): isohook cannot tell whether another name is a file outside ${folder.shown}, so it reads no hard-linked file from a hook folder. Replace the link with a copy (cp).`,
    );
  }
  if (folder !== undefined && stats.dev !== folder.device) {
    throw new HookFileError(
      "other_filesystem",
      shown,
      `${shown} is on another file system than ${folder.shown} (a mount point inside the hook folder): isohook reads only the folder's own files. Copy the file into the folder.`,
    );
  }
  if (stats.size > maxBytes) throw tooLarge(options, `${stats.size.toLocaleString("en-US")} bytes`);
}

async function readCapped(handle: FileHandle, options: ReadHookFileOptions): Promise<string> {
  const { maxBytes } = options;
  // A regular file may still grow, or report size 0 while it has content (procfs): read to the cap only.
  const buffer = new Uint8Array(Math.min(maxBytes + 1, 64 * 1024));
  const decoder = new TextDecoder();
  let text = "";
  let total = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, maxBytes + 1 - total), null);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > maxBytes) throw tooLarge(options, "more");
    text += decoder.decode(buffer.subarray(0, bytesRead), { stream: true });
  }
  return text + decoder.decode();
}

function checkLines(text: string, maxLines: number, shown: string): void {
  let lines = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < text.length - 1; i = text.indexOf("\n", i + 1)) {
    if (++lines > maxLines) {
      throw new HookFileError(
        "too_many_lines",
        shown,
        `${shown} has more than ${maxLines.toLocaleString("en-US")} lines, the most isohook reads from a hook folder file. Keep the cases that matter, or split them across hooks.`,
      );
    }
  }
}

function tooLarge({ shown, maxBytes, folder }: ReadHookFileOptions, size: string): HookFileError {
  return new HookFileError(
    "file_too_large",
    shown,
    `${shown} is larger than ${maxBytes.toLocaleString("en-US")} bytes (${size}), the most isohook reads from ${source(folder)}. Make it smaller.`,
  );
}

/** The error for a file whose real path is outside `folder`: it names the link, never the target. */
export function leavesFolder(shown: string, folder: FolderBounds): HookFileError {
  return new HookFileError(
    "outside_folder",
    shown,
    `${shown} leads outside the hook folder ${folder.shown} (a symbolic link): isohook reads only files inside it. Replace the link with the file itself.`,
  );
}

function missingOrUnreadable(error: unknown, shown: string): HookFileError {
  if (codeOf(error) === "ENOENT" || codeOf(error) === "ENOTDIR")
    return new HookFileError("file_not_found", shown, `No file ${shown}.`);
  return new HookFileError(
    "unreadable_file",
    shown,
    `Cannot read ${shown} (${codeOf(error) ?? "error"}). Check its permissions.`,
  );
}

/** What a file that is not a regular file is, for messages: "a FIFO (named pipe)", "a directory", … */
export function fileKind(stats: Stats): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSocket()) return "a socket";
  return "not a regular file";
}

function codeOf(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}
