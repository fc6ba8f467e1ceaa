import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const call = (name: string, args: object) => ({ call: { id: "c1", name, args }, batch: { index: 0, size: 1 } });

/** A fixture line for tool.call. */
export function toolCallFixture(name: string, args: object, expect: object): string {
  return JSON.stringify({ point: "tool.call", event: call(name, args), expect });
}

/** A policy that blocks `shell` calls whose command contains "rm -rf", defensively written. */
export const GOOD_INDEX = `
export default {
  toolCall(event) {
    const command = event.call.args.command;
    if (event.call.name === "shell" && typeof command === "string" && command.includes("rm -rf")) {
      return { type: "block", reason: "destructive shell command" };
    }
  },
};
`;

export const GOOD_FIXTURES = [
  toolCallFixture("shell", { command: "rm -rf /" }, { type: "block", reason: "destructive shell command" }),
  toolCallFixture("shell", { command: "ls" }, { noop: true }),
].join("\n");

/**
 * Writes a hook module folder (index.ts and, unless `fixtures` is null, fixtures.jsonl) under `root`.
 * Test hooks are generated, not checked in: several are broken on purpose and must not reach tsc or biome.
 */
export function writeHook(root: string, name: string, index: string, fixtures: string | null = GOOD_FIXTURES): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "index.ts"), index);
  if (fixtures !== null) writeFileSync(join(dir, "fixtures.jsonl"), `${fixtures}\n`);
  return dir;
}
