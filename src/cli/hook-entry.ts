import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { CliError, type ParsedArgs, UsageError } from "./command.js";

/**
 * The one hook entry a command takes as its positional argument (a .ts file or a folder containing
 * index.ts), checked to exist: a mistyped path says so before anything else is read.
 */
export async function hookEntryOf(args: ParsedArgs, cwd: string): Promise<string> {
  const [entry, ...rest] = args.positionals;
  if (entry === undefined) throw new UsageError("Missing the hook entry: a .ts file or a folder containing index.ts");
  if (rest.length > 0) throw new UsageError(`Expected one hook entry, got ${args.positionals.length}`);
  const exists = await stat(resolve(cwd, entry)).then(
    () => true,
    () => false,
  );
  if (!exists) {
    throw new CliError(
      `There is no hook at ${entry}: pass a hook's .ts file or a folder containing index.ts (\`isohook init <dir>\` makes one)`,
      "no_hook",
    );
  }
  return entry;
}
