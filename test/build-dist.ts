/**
 * vitest global setup: builds dist/ (as `npm run build` does) when a source is newer than it, before any test
 * file runs. The package's exports point at dist/, so tests that use isohook as an installed package (the
 * pack test's tarball, `isohook init`'s project linking the repo) need it, and building once here keeps
 * them from racing each other's builds.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../", import.meta.url));

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

export default function setup(): void {
  const sources = Math.max(newestMtime(join(REPO, "src")), newestMtime(join(REPO, "sandbox")));
  let built = 0;
  try {
    built = statSync(join(REPO, "dist", "src", "index.js")).mtimeMs;
  } catch {
    built = 0;
  }
  if (built > sources) return;
  execFileSync(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "--silent", "build"], {
    cwd: REPO,
    stdio: "inherit",
  });
}
