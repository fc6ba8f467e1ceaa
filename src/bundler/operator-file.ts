import { HookFileError, readHookFile } from "./hook-file.js";

/** A file the operator or the host names (not a tenant's folder file): what it is called in messages, and its cap. */
export interface OperatorFileOptions {
  /** The file as shown to the user (as given, before resolving). */
  readonly shown: string;
  /** What the file is, in the message: `the scenario`, `the checkpoint`. */
  readonly what: string;
  /** Largest file accepted, in bytes. */
  readonly maxBytes: number;
}

/**
 * A file named by whoever runs isohook (`run --scenario`, `--resume`, `loadScenario`, a config or an
 * export), read as UTF-8 through the hardened reader: opened non-blocking and checked with `fstat` before
 * a byte is read, so a FIFO, `/dev/zero` (or a link to it), a socket or a directory fails at once naming
 * what it is, and at most `maxBytes + 1` bytes are read. The one reader of such files, for the library
 * and the CLI alike.
 *
 * @throws {HookFileError} with the reader's code (`not_a_file`, `file_too_large`, `file_not_found`, …) and
 *   the message `Cannot read <what> <shown>: <why>`.
 */
export async function readOperatorFile(path: string, options: OperatorFileOptions): Promise<string> {
  const { shown, what, maxBytes } = options;
  try {
    return await readHookFile(path, { shown, maxBytes });
  } catch (error) {
    if (error instanceof HookFileError) {
      // The reader's own "No file X." would name the file twice.
      const why = error.code === "file_not_found" ? "no such file" : error.message;
      throw new HookFileError(error.code, shown, `Cannot read ${what} ${shown}: ${why}`);
    }
    throw error;
  }
}
