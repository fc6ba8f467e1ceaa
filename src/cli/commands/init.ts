import { mkdir, readdir, writeFile } from "node:fs/promises";
import { basename, join, relative, resolve } from "node:path";
import { HOOK_POINT_NAMES, HOOK_POINTS, type HookPoint, type JsonValue } from "../../protocol/index.js";
import { line, lines } from "../../terminal/index.js";
import { CliError, type Command, EXIT, UsageError, writeJson } from "../command.js";
import { hookPointOf } from "../hook-point-option.js";
import { hookProjectFiles } from "../init-template.js";
import { PACKAGE_ROOT } from "../package-info.js";

const HELP = `Usage: isohook init <dir> [--point tool.call …] [--json]

Creates a hook project in <dir> (a new or empty folder) that works outside this repo:
  package.json          depends on this isohook (a file: spec to the package this command runs from),
                        vitest and typescript; \`npm test\` runs hook.test.ts, \`npm run typecheck\` tsc
  tsconfig.json         for the hook (no Node types: the sandbox has no Node; isohook/hook-sdk declares console)
  hook/index.ts         typed handlers for the chosen hook points (default tool.call)
  hook/fixtures.jsonl   one case per point (run by \`isohook test\`, the deploy gate and the test)
  hook.test.ts          a vitest file using isohook/testing: bundles the hook and runs it in the real sandbox
Then: cd <dir> && npm install && npm test; upload with \`isohook upload --tenant <id> <dir>/hook\`.

Options:
  --point <point>    A hook point to write a handler for; repeat for several (default: tool.call)
  --json             One JSON object: {"dir", "files", "hookPoints"}
  -h, --help         Show this help

Exit codes: 0 created, 1 <dir> is not empty or cannot be written, 2 usage.
`;

export const initCommand: Command = {
  name: "init",
  summary: "Create a hook project: handlers, fixtures and a vitest test using isohook/testing",
  help: HELP,
  options: { point: { type: "string", multiple: true } },
  allowPositionals: true,
  async run(args, io) {
    const [target, ...rest] = args.positionals;
    if (target === undefined) throw new UsageError("Missing the folder to create the hook project in");
    if (rest.length > 0) throw new UsageError(`Expected one folder, got ${args.positionals.length}`);
    const points = pointsOf(args.values.point);
    const dir = resolve(io.cwd, target);
    const existing = await readdir(dir).catch(() => []);
    if (existing.length > 0) {
      throw new CliError(`${target} is not empty: pick a new folder; init never overwrites files`, "not_empty");
    }
    const name =
      basename(dir)
        .toLowerCase()
        .replace(/[^a-z0-9._-]/g, "-") || "hooks";
    // Loaded on use: the fuzz engine pulls in fast-check, which other commands never need.
    const { sampleEvent } = await import("../../fuzz/index.js");
    const sample = (point: HookPoint): JsonValue => {
      const event = HOOK_POINTS[point].event.safeParse(sampleEvent(point));
      return event.success ? (event.data as JsonValue) : {};
    };
    // isohook is not on the registry: the project depends on the package this command runs from.
    const files = hookProjectFiles(name, points, `file:${PACKAGE_ROOT}`, sample);
    try {
      await mkdir(join(dir, "hook"), { recursive: true });
      for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text, { flag: "wx" });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new CliError(`Cannot write the hook project to ${target}: ${reason}`, "write_failed");
    }
    const shown = relative(io.cwd, dir) || ".";
    if (args.json) {
      writeJson(io, { dir: shown, files: Object.keys(files), hookPoints: points });
      return EXIT.ok;
    }
    io.stdout(
      lines([
        line`Created a hook project in ${shown} (${points.join(", ")}): ${Object.keys(files).join(", ")}`,
        line`Next: cd ${shown} && npm install && npm test`,
        line`      isohook test ${join(shown, "hook")}    # the fixtures, one line each`,
      ]),
    );
    return EXIT.ok;
  },
};

function pointsOf(raw: unknown): HookPoint[] {
  const given = Array.isArray(raw) ? raw.map(String) : [];
  if (given.length === 0) return ["tool.call"];
  const points: HookPoint[] = [];
  for (const name of given) {
    const point = hookPointOf(name, "--point");
    if (!points.includes(point)) points.push(point);
  }
  return HOOK_POINT_NAMES.filter((p) => points.includes(p));
}
