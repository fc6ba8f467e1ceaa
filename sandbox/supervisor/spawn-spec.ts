import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** How a sandbox worker process is forked. */
export interface WorkerSpawnSpec {
  /** Absolute path of the worker's main module. */
  readonly entry: string;
  readonly execArgv: readonly string[];
  readonly cwd: string;
  /** The environment the worker gets: none of the host's (API keys stay in the host), only a temp dir. */
  readonly env: Readonly<Record<string, string>>;
}

const OWN_EXTENSION = import.meta.url.endsWith(".ts") ? "ts" : "js";

/**
 * The spawn spec for `entry` (default: sandbox/worker/worker-main). `--no-node-snapshot` because the worker
 * loads isolated-vm (DESIGN §2.8); a `.ts` entry is loaded through tsx, resolved to a file URL so the
 * worker finds it whatever its cwd.
 */
export function workerSpawnSpec(entry?: string): WorkerSpawnSpec {
  const file = entry ?? fileURLToPath(new URL(`../worker/worker-main.${OWN_EXTENSION}`, import.meta.url));
  const execArgv = ["--no-node-snapshot"];
  if (file.endsWith(".ts")) {
    execArgv.push("--import", pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href);
  }
  const env: Record<string, string> = {};
  const tmp = process.env.TMPDIR;
  if (tmp !== undefined) env.TMPDIR = tmp;
  return { entry: file, execArgv, cwd: dirname(file), env };
}
