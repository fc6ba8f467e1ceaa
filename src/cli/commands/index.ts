import type { Command } from "../command.js";

/** Every `isohook` command, in the order `isohook --help` lists them. Add one line per command. */
export const COMMANDS: readonly Command[] = [];
