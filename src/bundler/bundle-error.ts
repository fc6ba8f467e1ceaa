import { printable } from "../terminal/index.js";

/** Why a hook could not be bundled or described. The first problem's kind is the error's `code`. */
export type BundleErrorCode =
  | "entry_not_found"
  | "node_builtin"
  | "outside_root"
  | "unsafe_file"
  | "dynamic_import"
  | "dynamic_require"
  | "top_level_await"
  | "unresolved_import"
  | "compile_error"
  | "no_default_export"
  | "bundle_too_large"
  | "unknown_handler"
  | "invalid_export"
  | "describe_failed";

/** One thing wrong with a hook module. `line` and `column` are 1-based; `file` is relative to the caller's cwd. */
export interface BundleProblem {
  readonly message: string;
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
}

/**
 * A hook module that cannot become a bundle. `message` lists every problem as `file:line:column: message`
 * so printing it is enough; `problems` keeps them structured for `--json` and editors.
 */
export class BundleError extends Error {
  override readonly name = "BundleError";
  readonly code: BundleErrorCode;
  readonly problems: readonly BundleProblem[];

  constructor(code: BundleErrorCode, headline: string, problems: readonly BundleProblem[]) {
    super([headline, ...problems.map((p) => `  ${formatProblem(p)}`)].join("\n"));
    this.code = code;
    this.problems = problems;
  }
}

/**
 * `file:line:column: message`, leaving out what is unknown, safe to print: handler names and sandbox
 * messages come from tenant code, so terminal control and bidi characters are shown escaped.
 */
function formatProblem(problem: BundleProblem): string {
  if (problem.file === undefined) return printable(problem.message);
  let where = problem.file;
  if (problem.line !== undefined) where += `:${problem.line}`;
  if (problem.line !== undefined && problem.column !== undefined) where += `:${problem.column}`;
  return printable(`${where}: ${problem.message}`);
}

/** What a code means, as the second half of "Cannot bundle <entry>: …". */
export function headlineOf(code: BundleErrorCode): string {
  switch (code) {
    case "entry_not_found":
      return "the entry does not exist";
    case "node_builtin":
      return "it imports a Node built-in";
    case "outside_root":
      return "it imports a file outside its hook folder";
    case "unsafe_file":
      return "it includes a file isohook will not read";
    case "dynamic_import":
      return "it uses import()";
    case "dynamic_require":
      return "it uses require() with a computed name";
    case "top_level_await":
      return "it uses top-level await";
    case "unresolved_import":
      return "an import cannot be resolved";
    case "compile_error":
      return "it does not compile";
    case "no_default_export":
      return "it has no default export";
    case "bundle_too_large":
      return "the bundle is too large";
    case "unknown_handler":
      return "it exports unknown hook handlers";
    case "invalid_export":
      return "its default export is not an object of handler functions";
    case "describe_failed":
      return "the sandbox could not load it";
    default: {
      const never: never = code;
      return never;
    }
  }
}
