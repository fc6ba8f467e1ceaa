import { defineHooks } from "isohook/hook-sdk";

/** Tools that run a command in a working directory given as `cwd`. */
const SHELL_TOOLS = new Set(["shell", "bash"]);

/** The tenant's sandbox folder: `ctx.config.workdir`, else `/workspace`. */
function workdirOf(config: unknown): string {
  if (typeof config === "object" && config !== null && !Array.isArray(config)) {
    const workdir = (config as { workdir?: unknown }).workdir;
    if (typeof workdir === "string" && workdir.startsWith("/")) return workdir.replace(/\/+$/, "") || "/";
  }
  return "/workspace";
}

/** Resolves `.` and `..` in an absolute path, the way a shell would see it. */
function normalize(path: string): string {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return `/${parts.join("/")}`;
}

function inside(path: string, root: string): boolean {
  return root === "/" || path === root || path.startsWith(`${root}/`);
}

/**
 * Forces shell commands into the tenant's working directory: a `cwd` that is missing, relative to nowhere
 * or outside the workdir is rewritten to the workdir itself (relative ones are resolved inside it).
 */
export default defineHooks({
  toolCall(event, ctx) {
    if (!SHELL_TOOLS.has(event.call.name)) return undefined;
    const root = workdirOf(ctx.config);
    const cwd = event.call.args.cwd;
    const wanted =
      typeof cwd === "string" && cwd !== "" ? normalize(cwd.startsWith("/") ? cwd : `${root}/${cwd}`) : root;
    const safe = inside(wanted, root) ? wanted : root;
    if (safe === cwd) return undefined;
    return { type: "rewrite", args: { ...event.call.args, cwd: safe } };
  },
});
