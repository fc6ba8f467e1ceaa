import { relative, resolve } from "node:path";
import type { Message } from "esbuild";
import type { BundleErrorCode, BundleProblem } from "./bundle-error.js";
import { toPosix } from "./entry.js";
import { isGuardDetail } from "./guard-plugin.js";

/** Where esbuild's paths are relative to, and how to name files for the user. */
export interface MessageContext {
  /** esbuild's absWorkingDir: the entry's folder. */
  readonly workDir: string;
  /** The user's cwd: problems name files relative to it. */
  readonly cwd: string;
  /** The generated wrapper module's name, which re-exports the entry's default export. */
  readonly wrapperFile: string;
  /** The entry file relative to cwd. */
  readonly entryFile: string;
}

export interface MappedMessages {
  readonly code: BundleErrorCode;
  readonly problems: BundleProblem[];
}

/** Turns esbuild's error messages into problems with a code each; the first one's code wins. */
export function mapEsbuildErrors(messages: readonly Message[], context: MessageContext): MappedMessages {
  let code: BundleErrorCode | undefined;
  const problems: BundleProblem[] = [];
  for (const message of messages) {
    const mapped = mapMessage(message, context);
    code ??= mapped.code;
    problems.push(mapped.problem);
  }
  return { code: code ?? "compile_error", problems };
}

function mapMessage(message: Message, context: MessageContext): { code: BundleErrorCode; problem: BundleProblem } {
  const where = locate(message, context);
  if (isGuardDetail(message.detail))
    return { code: message.detail.isohook, problem: { message: message.text, ...where } };
  if (message.location?.file === context.wrapperFile && /No matching export/.test(message.text)) {
    return {
      code: "no_default_export",
      problem: {
        message: "The hook module has no default export. Export your hooks: `export default defineHooks({ … })`.",
        file: context.entryFile,
      },
    };
  }
  if (/top-level await/i.test(message.text)) {
    return {
      code: "top_level_await",
      problem: {
        message:
          "Top-level `await` is not supported: a hook module must load synchronously. Move the await into a handler.",
        ...where,
      },
    };
  }
  if (message.text.startsWith("Could not resolve")) {
    return {
      code: "unresolved_import",
      problem: { message: `${message.text}. Install the package or fix the path.`, ...where },
    };
  }
  return { code: "compile_error", problem: { message: message.text, ...where } };
}

function locate(message: Message, context: MessageContext): Omit<BundleProblem, "message"> {
  const location = message.location;
  if (!location) return {};
  const inFiles = location.namespace === "" || location.namespace === "file";
  const file = inFiles
    ? toPosix(relative(context.cwd, resolve(context.workDir, location.file)))
    : `${location.namespace}:${location.file}`;
  // esbuild's columns are 0-based; editors and `file:line:column` are 1-based.
  return { file, line: location.line, column: location.column + 1 };
}
