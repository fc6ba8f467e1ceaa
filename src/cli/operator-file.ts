import { resolve } from "node:path";
import { HookFileError, readHookFile } from "../bundler/index.js";
import { CliError } from "./command.js";

/**
 * A file the operator names on the command line (`run --scenario` and `--resume`, `shadow-report --from`,
 * `replay --from`, `upload --config`), read as UTF-8 through the bundler's hardened reader: opened
 * non-blocking and checked with `fstat` before a byte is read, so a FIFO, `/dev/zero` (or a link to it),
 * a socket or a directory fails at once naming what it is, and at most `maxBytes + 1` bytes are read.
 * `file` is shown as given and resolved against `cwd`; `what` names it in the error (`the config file`).
 *
 * @throws {CliError} with the reader's code (`not_a_file`, `file_too_large`, `file_not_found`, …).
 */
export async function readOperatorFile(cwd: string, file: string, what: string, maxBytes: number): Promise<string> {
  try {
    return await readHookFile(resolve(cwd, file), { shown: file, maxBytes });
  } catch (error) {
    if (error instanceof HookFileError) {
      // The reader's own "No file X." would name the file twice.
      const why = error.code === "file_not_found" ? "no such file" : error.message;
      throw new CliError(`Cannot read ${what} ${file}: ${why}`, error.code);
    }
    throw error;
  }
}
