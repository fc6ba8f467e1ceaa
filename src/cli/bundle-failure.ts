import { BundleError } from "../bundler/index.js";
import { CliError, type CliIO, EXIT, type ParsedArgs, writeJson } from "./command.js";

/**
 * Turns a failed bundling into the command's answer: a CliError (exit 1) with the bundler's message, or with
 * `--json` one `{"error": {code, message, problems}}` line. Anything that is not a BundleError is rethrown.
 */
export function bundleFailure(error: unknown, args: ParsedArgs, io: CliIO): number {
  if (io.signal?.aborted) throw new CliError("Aborted", "aborted");
  if (!(error instanceof BundleError)) throw error;
  if (!args.json) throw new CliError(error.message, error.code);
  writeJson(io, { error: { code: error.code, message: error.message, problems: error.problems } });
  return EXIT.failed;
}
