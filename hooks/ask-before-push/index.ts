import { defineHooks } from "isohook/hook-sdk";

/** Branches a push may not reach without a human: `ctx.config.protected`, else main and master. */
function protectedOf(config: unknown): string[] {
  if (typeof config === "object" && config !== null && !Array.isArray(config)) {
    const list = (config as { protected?: unknown }).protected;
    if (Array.isArray(list) && list.every((b) => typeof b === "string")) return list as string[];
  }
  return ["main", "master"];
}

/** `git push [remote] [branch]` in a shell command line: the branch, or "" when none is named. */
function pushedBranch(command: string): string | undefined {
  for (const segment of command.split(/&&|\|\||;|\|/)) {
    const words = segment.trim().split(/\s+/);
    const git = words.indexOf("git");
    if (git === -1 || words[git + 1] !== "push") continue;
    const rest = words.slice(git + 2).filter((w) => !w.startsWith("-"));
    const ref = rest[1] ?? "";
    return ref.includes(":") ? (ref.split(":").pop() ?? "") : ref;
  }
  return undefined;
}

/**
 * Asks a human before a `git push` to a protected branch (or one that names no branch, which pushes the
 * current one); counts the pushes it asked about in `ctx.state.asked`.
 */
export default defineHooks({
  toolCall(event, ctx) {
    const command = event.call.args.command;
    if (event.call.name !== "shell" || typeof command !== "string") return undefined;
    const branch = pushedBranch(command);
    if (branch === undefined) return undefined;
    if (branch !== "" && !protectedOf(ctx.config).includes(branch)) return undefined;
    ctx.state.asked = (typeof ctx.state.asked === "number" ? ctx.state.asked : 0) + 1;
    const target = branch === "" ? "the current branch" : branch;
    return { type: "ask", reason: `git push to ${target} needs a human`, question: `Push to ${target}? (${command})` };
  },
});
