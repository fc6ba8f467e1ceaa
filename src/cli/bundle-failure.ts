import { BundleError } from "../bundler/index.js";
import { CliError, type CliIO } from "./command.js";

/**
 * Turns a failed bundling into the command's answer: a CliError (exit 1) with the bundler's message and,
 * in the `--json` error object, its `problems`. Anything that is not a BundleError is rethrown.
 */
export function bundleFailure(error: unknown, io: Pick<CliIO, "signal">): never {
  if (io.signal?.aborted) throw new CliError("Aborted", "aborted");
  if (!(error instanceof BundleError)) throw error;
  throw new CliError(error.message, error.code, { problems: error.problems });
}
