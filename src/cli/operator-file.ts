import { resolve } from "node:path";
import { HookFileError, readOperatorFile as readFile } from "../bundler/index.js";
import { CliError } from "./command.js";

/**
 * A file the operator names on the command line (`run --scenario` and `--resume`, `shadow-report --from`,
 * `replay --from`, `upload --config`), read by the one operator-file reader (`readOperatorFile` of the
 * bundler): a FIFO, a device or a directory fails at once naming what it is. `file` is shown as given and
 * resolved against `cwd`; `what` names it in the error (`the config file`).
 *
 * @throws {CliError} with the reader's code (`not_a_file`, `file_too_large`, `file_not_found`, …).
 */
export async function readOperatorFile(cwd: string, file: string, what: string, maxBytes: number): Promise<string> {
  try {
    return await readFile(resolve(cwd, file), { shown: file, what, maxBytes });
  } catch (error) {
    if (error instanceof HookFileError) throw new CliError(error.message, error.code);
    throw error;
  }
}
