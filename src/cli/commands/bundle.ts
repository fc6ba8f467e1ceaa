import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { createHookExecutor } from "../../../sandbox/supervisor/index.js";
import { compileHook, describeBundle } from "../../bundler/index.js";
import {
  type BundleManifest,
  type HookExecutor,
  type HookPoint,
  isToolPoint,
  type ToolMatchers,
} from "../../protocol/index.js";
import { line, lines, type Printed } from "../../terminal/index.js";
import { bundleFailure } from "../bundle-failure.js";
import { CliError, type Command, EXIT, stringFlag, writeJson } from "../command.js";
import { hookEntryOf } from "../hook-entry.js";

const HELP = `Usage: isohook bundle <entry> [--out file] [--root dir] [--json]

Bundles a hook module (a .ts file, or a folder containing index.ts) into one script for the sandbox,
loads it in a sandbox worker to list the hook points it exports, and prints its manifest (hash, size,
hook points, SDK version). Node built-ins, import(), top-level await, unknown handler names and bundles
over 1 MB are refused, each problem with its file:line:column.

Options:
  --out <file>   Write the script to <file> and its source map to <file>.map
  --root <dir>   The hook folder: every file the bundle includes must be inside it, packages in its
                 own node_modules (default: the entry's folder; never a folder above it)
  --json         Print the manifest as one line of JSON (on failure: {"error": {code, message, problems}})
  -h, --help     Show this help

Exit codes: 0 bundled, 1 the hook module has problems, 2 usage.
`;

/** What the command needs from outside; tests pass a fake executor. */
export interface BundleCommandDeps {
  /** Opens the sandbox the bundle is described in; the command closes it. */
  readonly openExecutor: (signal?: AbortSignal) => Promise<HookExecutor>;
}

/** The default: one sandbox worker process, no spare (a one-off describe). */
const defaultDeps: BundleCommandDeps = {
  openExecutor: (signal) =>
    createHookExecutor(signal ? { workers: 1, spareWorker: false, signal } : { workers: 1, spareWorker: false }),
};

export function createBundleCommand(deps: BundleCommandDeps = defaultDeps): Command {
  return {
    name: "bundle",
    summary: "Bundle a hook module and print its manifest",
    help: HELP,
    options: { out: { type: "string", short: "o" }, root: { type: "string" } },
    allowPositionals: true,
    async run(args, io) {
      const entry = await hookEntryOf(args, io.cwd);
      const out = stringFlag(args, "out");
      try {
        const built = await compileHook(entry, { cwd: io.cwd, root: stringFlag(args, "root"), signal: io.signal });
        const executor = await open(deps, io.signal);
        let manifest: BundleManifest;
        try {
          manifest = await describeBundle(built, executor, { signal: io.signal });
        } finally {
          await executor.close();
        }
        if (out !== undefined) await writeOutput(resolve(io.cwd, out), built.code, built.sourceMap);
        if (args.json) writeJson(io, manifest);
        else io.stdout(summary(manifest, out));
        return EXIT.ok;
      } catch (error) {
        bundleFailure(error, io);
      }
    },
  };
}

export const bundleCommand = createBundleCommand();

async function open(deps: BundleCommandDeps, signal: AbortSignal | undefined): Promise<HookExecutor> {
  try {
    return await deps.openExecutor(signal);
  } catch (error) {
    if (signal?.aborted) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new CliError(`Cannot start a sandbox worker to load the bundle: ${reason}`, "sandbox_unavailable");
  }
}

async function writeOutput(file: string, code: string, sourceMap: string): Promise<void> {
  try {
    await mkdir(dirname(file), { recursive: true });
    await Promise.all([writeFile(file, code), writeFile(`${file}.map`, sourceMap)]);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CliError(`Cannot write the bundle to ${file}: ${reason}. Pick another --out path.`, "write_failed");
  }
}

function summary(manifest: BundleManifest, out: string | undefined): Printed {
  const nothing = manifest.observe === undefined ? "none (the bundle does nothing)" : "none";
  const points = manifest.hookPoints.length > 0 ? pointsText(manifest.hookPoints, manifest.tools) : nothing;
  const shown = [
    line`Bundled ${manifest.entry}: ${manifest.bytes.toLocaleString("en-US")} bytes, ${manifest.hash}`,
    line`Hook points: ${points}`,
  ];
  if (manifest.observe !== undefined) {
    shown.push(line`Observe-only: ${pointsText(manifest.observe.hookPoints, manifest.observe.tools)}`);
  }
  if (out !== undefined) shown.push(line`Wrote ${out} and ${out}.map`);
  return lines(shown);
}

/** `tool.call (tools: shell, git_*), run.end`: globs are tool-name characters and wildcards only (ToolGlob). */
function pointsText(points: readonly HookPoint[], tools: ToolMatchers | undefined): string {
  return points
    .map((point) => {
      const globs = isToolPoint(point) ? tools?.[point] : undefined;
      return globs === undefined ? point : `${point} (tools: ${globs.join(", ")})`;
    })
    .join(", ");
}
