import { type ParseArgsConfig, parseArgs } from "node:util";
import { closestName } from "../protocol/index.js";
import { lines, type Printed, printableJson } from "../terminal/index.js";

/**
 * Where a command writes and what it may read of its environment: tests pass their own. The writers take
 * only `Printed` text (built by `line`, `lines`, `printable` or `printableJson`): every line a command
 * prints has had its tenant fields escaped, or it does not compile.
 */
export interface CliIO {
  readonly stdout: (text: Printed) => void;
  readonly stderr: (text: Printed) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly signal?: AbortSignal;
}

export type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

/**
 * One `isohook` command. `run` returns the exit code: 0 ok, 1 failed (EXIT.failed), 2 usage (EXIT.usage).
 * Commands never call process.exit; main.ts alone does.
 */
export interface Command {
  readonly name: string;
  readonly summary: string;
  /** Full help text printed by `--help`, starting with the usage line. */
  readonly help: string;
  readonly options: OptionSpec;
  readonly allowPositionals: boolean;
  run(args: ParsedArgs, io: CliIO): Promise<number>;
}

export interface ParsedArgs {
  readonly values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  readonly positionals: string[];
  readonly json: boolean;
}

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A wrong invocation: printed with the command's usage line, exit 2. */
export class UsageError extends Error {
  readonly code = "usage";
}

/**
 * A failure the user can act on: printed as is, exit 1. The message says what to do next. `details` are
 * extra fields of the `--json` error object (`problems`, `report`, …), next to `code` and `message`.
 */
export class CliError extends Error {
  readonly code: string;
  readonly details: Readonly<Record<string, unknown>>;
  constructor(message: string, code = "failed", details: Readonly<Record<string, unknown>> = {}) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

const COMMON_OPTIONS: OptionSpec = {
  help: { type: "boolean", short: "h" },
  json: { type: "boolean" },
};

/**
 * Parses a command's argv strictly: unknown flags (with a did-you-mean), a single-value flag given twice
 * and stray positionals are usage errors.
 */
export function parseCommandArgs(command: Command, argv: string[]): ParsedArgs & { help: boolean } {
  const options = { ...COMMON_OPTIONS, ...command.options };
  checkFlags(options, argv);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: command.allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  return {
    values: parsed.values,
    positionals: parsed.positionals,
    json: parsed.values.json === true,
    help: parsed.values.help === true,
  };
}

function checkFlags(options: OptionSpec, argv: string[]): void {
  const { tokens } = parseArgs({ args: argv, options, allowPositionals: true, strict: false, tokens: true });
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    const spec = options[token.name];
    if (spec === undefined) {
      const guess = closestName(token.name, Object.keys(options));
      const hint = guess === undefined ? "" : ` (did you mean --${guess}?)`;
      throw new UsageError(`Unknown option ${token.rawName}${hint}`);
    }
    if (seen.has(token.name) && spec.multiple !== true) {
      throw new UsageError(`--${token.name} was given more than once: give it once`);
    }
    seen.add(token.name);
  }
}

/** Whether argv asks for `--json` (before a `--`), known before the arguments are parsed. */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}

/** Reads a string flag; `required` makes its absence a usage error naming the flag. */
export function stringFlag(args: ParsedArgs, name: string, required: true): string;
export function stringFlag(args: ParsedArgs, name: string, required?: false): string | undefined;
export function stringFlag(args: ParsedArgs, name: string, required = false): string | undefined {
  const value = args.values[name];
  if (typeof value === "string") return value;
  if (required) throw new UsageError(`Missing --${name}`);
  return undefined;
}

/** Reads a flag that must be an integer in [min, max]. */
export function integerFlag(args: ParsedArgs, name: string, min: number, max: number): number | undefined {
  const raw = stringFlag(args, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(`Expected --${name} to be an integer from ${min} to ${max}, got \`${raw}\``);
  }
  return value;
}

/**
 * Writes one JSON value as a line on stdout (the `--json` output convention, docs/cli-output.schema.json):
 * tenant text in it stays exact, with the characters a terminal would act on JSON-escaped.
 */
export function writeJson(io: CliIO, value: unknown): void {
  io.stdout(lines([printableJson(value)]));
}

/**
 * A command whose report says it failed (fixtures that fail, a fuzz finding): the report is printed as
 * usual, and with `--json` the error object follows it, so every exit 1 ends with one. Returns exit 1.
 */
export function failedVerdict(io: CliIO, args: ParsedArgs, code: string, message: string): number {
  if (args.json) writeJsonError(io, code, message);
  return EXIT.failed;
}

/** The `--json` error object: `{"error": {"code", "message", …details}}` on stdout, the same for every command. */
export function writeJsonError(
  io: CliIO,
  code: string,
  message: string,
  details: Readonly<Record<string, unknown>> = {},
) {
  writeJson(io, { error: { ...details, code, message } });
}
