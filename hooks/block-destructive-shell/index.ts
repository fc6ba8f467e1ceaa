import { defineHooks } from "isohook/hook-sdk";

/** Tools whose `command` argument is run by a shell. */
const SHELL_TOOLS = new Set(["shell", "bash"]);

const SEPARATOR = /[;&|]/g;

/**
 * `first`, then `then` further on in the same command (up to the next `;`, `&` or `|`). Each segment is
 * searched once, from its first `first`: the single pattern /\brm\b[^;&|]*--no-preserve-root/ rescans the
 * rest of the command from every `rm`, quadratic on `rm -rf /rm -rf /…` (32 KB ran past the 50 ms timeout).
 * Both patterns need the `g` flag (`lastIndex` says where to start, and `\b` still sees what is before).
 */
function inSegment(first: RegExp, then: RegExp): { test(command: string): boolean } {
  return {
    test(command) {
      first.lastIndex = 0;
      for (let found = first.exec(command); found !== null; found = first.exec(command)) {
        SEPARATOR.lastIndex = found.index;
        const end = SEPARATOR.exec(command)?.index ?? command.length;
        then.lastIndex = found[0].length;
        if (then.test(command.slice(found.index, end))) return true;
        first.lastIndex = end;
      }
      return false;
    },
  };
}

/** Commands that destroy a machine, each with the name a blocked call's reason gives. */
const DESTRUCTIVE: readonly { readonly name: string; readonly pattern: { test(command: string): boolean } }[] = [
  {
    name: "rm -rf /",
    pattern:
      /\brm\s+(?:-\S+\s+)*(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\s+(?:-\S+\s+)*(?:\/\*?|~\/?\*?|\$\{?HOME\}?\/?\*?)(?=$|[\s;&|)])/,
  },
  { name: "rm --no-preserve-root", pattern: inSegment(/\brm\b/g, /--no-preserve-root/g) },
  { name: "mkfs", pattern: /\bmkfs(?:\.[a-z0-9]+)?\b/ },
  { name: "dd of=/dev/…", pattern: inSegment(/\bdd\b/g, /\bof=\/dev\/(?!null\b|zero\b|stdout\b|stderr\b)/g) },
  { name: "write to a block device", pattern: />\s*\/dev\/(?:sd|hd|vd|xvd|nvme|disk|mmcblk)[a-z0-9]*/ },
  // The lookbehind starts the name only at a word's start: without it a long word backtracks quadratically.
  { name: "fork bomb", pattern: /(?<![\w:])([\w:]+)\s*\(\s*\)\s*\{[^}]*?\1\s*\|\s*\1\s*&/ },
  { name: "chmod -R on /", pattern: /\bchmod\s+(?:-\S+\s+)*-[a-zA-Z]*R[a-zA-Z]*\s+\S+\s+\/(?=$|[\s;&|])/ },
];

/** The shell command of a call: a string, or an argv array joined with spaces. */
function commandOf(args: { readonly [key: string]: unknown }): string | undefined {
  const command = args.command;
  if (typeof command === "string") return command;
  if (Array.isArray(command) && command.every((part) => typeof part === "string")) return command.join(" ");
  return undefined;
}

/** Blocks shell commands that wipe disks, delete the root or home folder, or fork-bomb the machine. */
export default defineHooks({
  toolCall(event) {
    if (!SHELL_TOOLS.has(event.call.name)) return undefined;
    const command = commandOf(event.call.args);
    if (command === undefined) return undefined;
    const hit = DESTRUCTIVE.find(({ pattern }) => pattern.test(command));
    if (hit === undefined) return undefined;
    return { type: "block", reason: `destructive shell command: ${hit.name}` };
  },
});
