import { type ChildProcess, fork } from "node:child_process";
import { createRequire } from "node:module";
import { Socket } from "node:net";
import { dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CHANNEL_FD_ENV, RUNNING_MARK_FD_ENV } from "../../src/protocol/index.js";
import type { RunningMarkFile } from "./running-mark-file.js";

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
 * loads isolated-vm (docs/architecture.md, "The trust boundary"); a `.ts` entry is loaded through tsx, resolved to a
 * file URL so the worker finds it whatever its cwd.
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

/** The worker's descriptor for the framed channel. */
const CHANNEL_FD = 5;

/**
 * Forks a worker by `spec`. fd 3 is Node's IPC channel (lifecycle only: the worker exits when it
 * disconnects), fd 4 the running-call mark file (when there is one), fd 5 the framed channel that carries
 * every request and response; stderr is piped for its tail, stdout ignored. A fork that failed has no
 * pipes: a socket that never connects stands in for the channel until the failure settles the worker.
 */
export function forkWorker(
  spec: WorkerSpawnSpec,
  marks: RunningMarkFile | undefined,
): { readonly child: ChildProcess; readonly frames: Socket } {
  const env: Record<string, string> = { ...spec.env, [CHANNEL_FD_ENV]: String(CHANNEL_FD) };
  if (marks !== undefined) env[RUNNING_MARK_FD_ENV] = "4";
  const child = fork(spec.entry, [], {
    execArgv: [...spec.execArgv],
    cwd: spec.cwd,
    env,
    serialization: "json",
    stdio: ["ignore", "ignore", "pipe", "ipc", marks === undefined ? "ignore" : marks.fd, "pipe"],
  });
  const stdio: readonly unknown[] = child.stdio;
  const frames = stdio[CHANNEL_FD];
  return { child, frames: frames instanceof Socket ? frames : new Socket() };
}

/**
 * Whether a forked worker holds the host's event loop open: it does while it boots, has calls pending (or
 * had, until the next deadline check) or is being killed (so its exit is seen and every call settles); an
 * idle executor does not hold the host open.
 */
export function referenceWorker(child: ChildProcess, frames: Socket, on: boolean): void {
  const stderr = child.stderr;
  if (on) {
    child.ref();
    child.channel?.ref();
    frames.ref();
    if (stderr instanceof Socket) stderr.ref();
  } else {
    child.unref();
    child.channel?.unref();
    frames.unref();
    if (stderr instanceof Socket) stderr.unref();
  }
}
