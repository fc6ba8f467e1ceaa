import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The folder of isohook's package.json: the repo root when run from source, the package root from dist/. */
export const PACKAGE_ROOT = packageRootAbove(dirname(fileURLToPath(import.meta.url)));

function packageRootAbove(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`No package.json above ${start}: reinstall isohook`);
  }
}
