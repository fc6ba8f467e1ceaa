import { access, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { isInside, MAX_SOURCE_BYTES } from "./containment.js";
import { toPosix } from "./entry.js";
import { type FolderBounds, HookFileError, readHookFile } from "./hook-file.js";

/** Longest `extends` chain followed; TypeScript's own configs need two or three. */
const MAX_EXTENDS = 16;

type CompilerOptions = Record<string, unknown>;

/**
 * The compiler options of the hook folder's own tsconfig.json with its `extends` chain flattened, for
 * esbuild's `tsconfigRaw`: esbuild then reads no tsconfig itself. Left to esbuild, it reads an `extends`
 * target from anywhere (a host secret it quotes in its parse error, `/dev/zero` without end, a FIFO that
 * hangs the build). Here every config in the chain is read by `readHookFile` inside the folder, and a
 * target outside it is refused by the name the tenant wrote, never by what it holds. Without a
 * tsconfig.json in the folder: no options (esbuild would otherwise use the nearest one above the folder).
 *
 * @throws {HookFileError} for a config that is outside the folder, not a regular file, too large, not
 * JSON, or an `extends` that cannot be found inside the folder.
 */
export async function tsconfigOf(folder: FolderBounds, cwd: string): Promise<{ compilerOptions: CompilerOptions }> {
  const file = join(folder.root, "tsconfig.json");
  if (!(await exists(file))) return { compilerOptions: {} };
  return { compilerOptions: await flatten(file, folder, cwd, []) };
}

async function flatten(file: string, folder: FolderBounds, cwd: string, chain: string[]): Promise<CompilerOptions> {
  const shown = toPosix(relative(cwd, file));
  if (chain.includes(file) || chain.length >= MAX_EXTENDS) {
    throw new HookFileError(
      "unreadable_file",
      shown,
      `${shown}: its \`extends\` chain ${chain.includes(file) ? "loops back to it" : `is longer than ${MAX_EXTENDS} configs`}. Flatten the compiler options into tsconfig.json.`,
    );
  }
  const config = parseConfig(await readHookFile(file, { shown, maxBytes: MAX_SOURCE_BYTES, folder }), shown);
  const bases = config.extends === undefined ? [] : [config.extends].flat();
  let merged: CompilerOptions = {};
  for (const base of bases) {
    if (typeof base !== "string") throw notConfig(shown, "`extends` must be a string or an array of strings");
    const baseFile = await findBase(base, dirname(file), folder, shown);
    merged = { ...merged, ...(await flatten(baseFile, folder, cwd, [...chain, file])) };
  }
  const own = config.compilerOptions ?? {};
  if (typeof own !== "object" || Array.isArray(own)) throw notConfig(shown, "`compilerOptions` must be an object");
  // Paths in a config are relative to it: made absolute so they keep meaning once flattened.
  const options: CompilerOptions = { ...own };
  if (typeof options.baseUrl === "string") options.baseUrl = resolve(dirname(file), options.baseUrl);
  else if (options.paths !== undefined && merged.baseUrl === undefined) options.baseUrl = dirname(file);
  return { ...merged, ...options };
}

/**
 * Where an `extends` name leads, found only inside the folder: a path relative to the config, or a
 * package in a node_modules between the config and the folder root (`name`, `name.json`,
 * `name/tsconfig.json`). Nothing outside the folder is looked at, not even whether it exists.
 */
async function findBase(name: string, from: string, folder: FolderBounds, shown: string): Promise<string> {
  const relativeName = name.startsWith("./") || name.startsWith("../") || isAbsolute(name);
  const candidates: string[] = [];
  if (relativeName) {
    const path = resolve(from, name);
    candidates.push(path, `${path}.json`);
  } else {
    for (let dir = from; isInside(folder.root, dir); dir = dirname(dir)) {
      const path = join(dir, "node_modules", name);
      candidates.push(path, `${path}.json`, join(path, "tsconfig.json"));
      if (dir === folder.root) break;
    }
  }
  const inside = candidates.filter((path) => isInside(folder.root, path));
  for (const path of inside) if (await isFileName(path)) return path;
  const where = relativeName && inside.length === 0 ? "is outside" : "is not found inside";
  throw new HookFileError(
    relativeName && inside.length === 0 ? "outside_folder" : "file_not_found",
    shown,
    `${shown} extends ${JSON.stringify(name)}, which ${where} the hook folder ${folder.shown}: isohook reads a tsconfig \`extends\` only from the folder (its own node_modules included). Copy the compiler options you need into ${shown}.`,
  );
}

/** tsconfig.json is JSON with comments and trailing commas; both are removed outside strings. */
function parseConfig(text: string, shown: string): { extends?: unknown; compilerOptions?: unknown } {
  let json = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      json += text.slice(i, end);
      i = end - 1;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      json += "\n";
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end === -1 ? text.length : end + 1;
      json += " ";
    } else json += c;
  }
  let value: unknown;
  try {
    value = JSON.parse(json.replace(/,(\s*[}\]])/g, "$1"));
  } catch (error) {
    throw notConfig(shown, `it is not JSON (${(error as Error).message})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw notConfig(shown, "it is not an object");
  return value;
}

function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
  return i + 1;
}

function notConfig(shown: string, why: string): HookFileError {
  return new HookFileError("unreadable_file", shown, `${shown} is no tsconfig: ${why}. Fix the file.`);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Whether a name exists in the folder (as anything: `readHookFile` refuses what is not a regular file). */
async function isFileName(path: string): Promise<boolean> {
  const info = await stat(path).catch(() => undefined);
  return info !== undefined && !info.isDirectory();
}
