import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** SHA-256 of a file's bytes (or "absent"), to prove a refused file was left untouched. */
export function fileDigest(path: string): string {
  if (!existsSync(path)) return "absent";
  return createHash("sha256").update(readFileSync(path, "latin1"), "latin1").digest("hex");
}

/**
 * Makes a file or folder unwritable for this process: chmod for a normal user, `chattr +i` for root
 * (root ignores modes). Returns the undo, or undefined when neither works here (the test then skips).
 */
export function makeUnwritable(path: string, isDirectory: boolean): (() => void) | undefined {
  const probe = () => {
    try {
      if (isDirectory) {
        const file = join(path, ".probe");
        writeFileSync(file, "x");
        execFileSync("rm", ["-f", file]);
      } else {
        writeFileSync(path, readFileSync(path, "latin1"), "latin1");
      }
      return true;
    } catch {
      return false;
    }
  };
  chmodSync(path, isDirectory ? 0o555 : 0o444);
  if (!probe()) return () => chmodSync(path, isDirectory ? 0o755 : 0o644);
  chmodSync(path, isDirectory ? 0o755 : 0o644);
  try {
    execFileSync("chattr", ["+i", path], { stdio: "ignore" });
  } catch {
    return undefined;
  }
  if (!probe()) return () => execFileSync("chattr", ["-i", path]);
  execFileSync("chattr", ["-i", path]);
  return undefined;
}

const CHILD = fileURLToPath(new URL("./store-child.ts", import.meta.url));
/** The host that only serves active() and prints each version change it sees (see the script's header). */
export const STORE_WATCH = fileURLToPath(new URL("../../../scripts/store-watch.ts", import.meta.url));

export interface ChildResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly lines: unknown[];
  readonly stderr: string;
}

/** Runs store-child.ts with one command; resolves with its exit code or signal and its output lines. */
export function runStoreChild(command: object): Promise<ChildResult> {
  return startStoreChild(command).done;
}

/**
 * Starts store-child.ts. With `barrier: true` in the command, `ready` resolves once the child has the
 * store open and `go()` lets it start writing. `onLine` sees each output line as it arrives; `script`
 * runs another script the same way (STORE_WATCH).
 */
export function startStoreChild(
  command: object,
  onLine?: (line: unknown) => void,
  script = CHILD,
): { ready: Promise<void>; go: () => void; done: Promise<ChildResult> } {
  const child = spawn(process.execPath, ["--import", "tsx", script, JSON.stringify(command)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const isReady = (l: string) => l === '{"ready":true}';
  let pending = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    pending += chunk.toString();
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      if (isReady(line)) markReady();
      else if (line.trim() !== "") onLine?.(JSON.parse(line) as unknown);
    }
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const done = new Promise<ChildResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      markReady();
      const lines = stdout
        .split("\n")
        .filter((l) => l.trim() !== "" && !isReady(l))
        .map((l) => JSON.parse(l) as unknown);
      resolve({ code, signal, lines, stderr });
    });
  });
  return { ready, go: () => child.stdin.end("go\n"), done };
}
