import { closestName } from "../protocol/index.js";
import { line, type Printed, printable } from "../terminal/index.js";
import {
  CliError,
  type CliIO,
  type Command,
  EXIT,
  parseCommandArgs,
  UsageError,
  wantsJson,
  writeJson,
  writeJsonError,
} from "./command.js";
import { COMMANDS } from "./commands/index.js";
import { startOtel } from "./otel-console.js";
import { packageVersion } from "./package-version.js";

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length), 4);
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    "Usage: isohook <command> [options]",
    "       isohook help <command> | isohook --version",
    "",
    "Commands:",
    ...lines,
    "",
    "Options:",
    "  -h, --help     Show this help (after a command: that command's help)",
    "  --version      Print the isohook version",
    "",
    "Every command takes --help and --json. With --json, all output is JSON on stdout (errors too:",
    '{"error": {"code", "message", …}}); see docs/cli-output.schema.json.',
    "",
    "Exit codes: 0 ok, 1 failed, 2 usage.",
    "",
  ].join("\n");
}

/**
 * Runs one CLI invocation and returns its exit code. Never exits the process (main.ts does). Everything a
 * command writes passes through `printable` (keeping line breaks) on its way out: commands escape tenant
 * text where they embed it, so it cannot start a line, and this keeps any they missed from reaching the
 * terminal as a control or bidi character. (`--json` lines are already escaped by `writeJson`.)
 */
export async function runCli(argv: string[], rawIO: CliIO): Promise<number> {
  const io: CliIO = {
    ...rawIO,
    stdout: (text) => rawIO.stdout(printable(text, { keepNewlines: true })),
    stderr: (text) => rawIO.stderr(printable(text, { keepNewlines: true })),
  };
  const json = wantsJson(argv);
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h") {
    printHelp(io, json, overview());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === "--version" || name === "-V") {
    if (json) writeJson(io, { isohook: await packageVersion() });
    else io.stdout(line`isohook ${await packageVersion()}\n`);
    return EXIT.ok;
  }
  if (name === "help")
    return help(
      rest.filter((a) => a !== "--json"),
      io,
      json,
    );
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) return fail(io, json, undefined, new UsageError(unknownCommand(name)));
  try {
    const args = parseCommandArgs(command, rest);
    if (args.help) {
      printHelp(io, json, command.help);
      return EXIT.ok;
    }
    const otel = await startOtel(io);
    try {
      return await command.run(args, io);
    } finally {
      await otel?.shutdown();
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof CliError) return fail(io, json, command, error);
    throw error;
  }
}

function help(topics: string[], io: CliIO, json: boolean): number {
  const [topic, ...extra] = topics;
  if (topic === undefined) {
    printHelp(io, json, overview());
    return EXIT.ok;
  }
  if (extra.length > 0) return fail(io, json, undefined, new UsageError("`isohook help` takes one command name"));
  const command = COMMANDS.find((c) => c.name === topic);
  if (!command) return fail(io, json, undefined, new UsageError(unknownCommand(topic)));
  printHelp(io, json, command.help);
  return EXIT.ok;
}

/** Help text as is, or with `--json` as `{"help": text}`. */
function printHelp(io: CliIO, json: boolean, text: string): void {
  if (json) writeJson(io, { help: text });
  else io.stdout(message(text.endsWith("\n") ? text : `${text}\n`));
}

/**
 * An error message or help text: written by isohook, several lines at times, with any tenant text in it
 * escaped where it was embedded; controls that slipped through are escaped here, line breaks are kept.
 */
function message(text: string): Printed {
  return printable(text, { keepNewlines: true });
}

function unknownCommand(name: string): string {
  const guess = closestName(name, COMMANDS.map((c) => c.name).concat("help"));
  const hint = guess === undefined ? "" : ` (did you mean \`${guess}\`?)`;
  return `Unknown command \`${name}\`${hint}. Run \`isohook --help\` for the list of commands.`;
}

/** Prints a usage error or CliError: the `--json` error object on stdout, or a message on stderr. */
function fail(io: CliIO, json: boolean, command: Command | undefined, error: UsageError | CliError): number {
  const usage = command?.help.split("\n")[0];
  if (json) {
    const details = error instanceof CliError ? error.details : usage === undefined ? {} : { usage };
    writeJsonError(io, error.code, error.message, details);
  } else if (error instanceof CliError) {
    io.stderr(message(`isohook ${command?.name}: ${error.message}\n`));
  } else if (command === undefined) {
    io.stderr(message(`isohook: ${error.message}\n`));
  } else {
    io.stderr(
      message(
        `isohook ${command.name}: ${error.message}\n${usage}\nRun \`isohook ${command.name} --help\` for details.\n`,
      ),
    );
  }
  return error instanceof CliError ? EXIT.failed : EXIT.usage;
}
