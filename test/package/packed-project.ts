/** What the package tests share: running npm and npx, and a project installed from the packed tarball. */
import { execFile } from "node:child_process";
import { mkdir, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
export const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
export const NPX = process.platform === "win32" ? "npx.cmd" : "npx";

export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function run(file: string, args: readonly string[], cwd: string, timeoutMs = 120_000): Promise<Ran> {
  return new Promise((done) => {
    execFile(file, args, { cwd, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      done({ code, stdout, stderr });
    });
  });
}

export async function ok(file: string, args: readonly string[], cwd: string): Promise<Ran> {
  const ran = await run(file, args, cwd);
  if (ran.code !== 0) throw new Error(`${file} ${args.join(" ")} exited ${ran.code}:\n${ran.stdout}\n${ran.stderr}`);
  return ran;
}

export const versionOf = async (dir: string): Promise<string | undefined> => {
  try {
    const manifest: unknown = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
    return typeof manifest === "object" && manifest !== null && "version" in manifest
      ? String(manifest.version)
      : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Packages with install scripts (the native builds) are installed without running them, then replaced by
 * the repo's own copy of the same version, built for this same Node by the repo's install; one the repo's
 * install dropped (the isolated-vm build for another Node) is removed, as npm drops it.
 */
export async function reuseRepoBuilds(project: string): Promise<string[]> {
  const reused: string[] = [];
  const modules = join(project, "node_modules");
  for (const name of await readdir(modules)) {
    if (name.startsWith(".") || name.startsWith("@")) continue;
    const manifest: unknown = JSON.parse(await readFile(join(modules, name, "package.json"), "utf8"));
    const scripts = typeof manifest === "object" && manifest !== null && "scripts" in manifest ? manifest.scripts : {};
    const hasInstall =
      typeof scripts === "object" && scripts !== null && ("install" in scripts || "postinstall" in scripts);
    if (!hasInstall) continue;
    const theirs = await versionOf(join(modules, name));
    const ours = await versionOf(join(REPO, "node_modules", name));
    await rm(join(modules, name), { recursive: true, force: true });
    if (ours === undefined) continue;
    expect(`${name}@${ours}`).toBe(`${name}@${theirs}`);
    await symlink(join(REPO, "node_modules", name), join(modules, name), "dir");
    reused.push(name);
  }
  return reused;
}

/**
 * `npm pack` of the built dist/ into `work`, then a fresh project `work/consumer` that installs the tarball
 * (and `extras`, at the repo's versions) from the local npm cache where it can, reusing the repo's native
 * builds. dist/ is built by the suite's global setup (test/build-dist.ts), as `prepack` would.
 */
export async function packedProject(work: string, extras: readonly string[] = []) {
  const packed = await ok(NPM, ["pack", "--silent", "--ignore-scripts", "--pack-destination", work], REPO);
  const tarball = join(work, packed.stdout.trim().split("\n").at(-1) ?? "");
  const project = join(work, "consumer");
  await mkdir(project, { recursive: true });
  await writeFile(join(project, "package.json"), '{ "name": "consumer", "private": true, "type": "module" }\n');
  const pinned = async (name: string) => `${name}@${await versionOf(join(REPO, "node_modules", name))}`;
  const started = performance.now();
  const flags = ["--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"];
  await ok(NPM, ["install", ...flags, tarball, ...(await Promise.all(extras.map(pinned)))], project);
  const reused = await reuseRepoBuilds(project);
  return { project, tarball, reused, installMs: performance.now() - started };
}
