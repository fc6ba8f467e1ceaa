export type { CliIO, Command } from "./command.js";
export { runCli } from "./run-cli.js";
