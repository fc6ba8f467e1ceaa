import { CliError, type CliIO, EXIT, parseCommandArgs, UsageError } from "./command.js";
import { COMMANDS } from "./commands/index.js";
import { packageVersion } from "./package-info.js";

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length), 4);
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    "Usage: isohook <command> [options]",
    "",
    "Commands:",
    ...lines,
    "",
    "Every command takes --help and --json. `isohook --version` prints the version.",
    "Exit codes: 0 ok, 1 failed, 2 usage.",
    "",
  ].join("\n");
}

/** Runs one CLI invocation and returns its exit code. Never exits the process (main.ts does). */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout(overview());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === "--version" || name === "-v") {
    io.stdout(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    io.stderr(`Unknown command \`${name}\`. Run \`isohook --help\` for the list of commands.\n`);
    return EXIT.usage;
  }
  try {
    const args = parseCommandArgs(command, rest);
    if (args.help) {
      io.stdout(command.help.endsWith("\n") ? command.help : `${command.help}\n`);
      return EXIT.ok;
    }
    return await command.run(args, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(
        `isohook ${name}: ${error.message}\n${command.help.split("\n")[0]}\nRun \`isohook ${name} --help\` for details.\n`,
      );
      return EXIT.usage;
    }
    if (error instanceof CliError) {
      io.stderr(`isohook ${name}: ${error.message}\n`);
      return EXIT.failed;
    }
    throw error;
  }
}
