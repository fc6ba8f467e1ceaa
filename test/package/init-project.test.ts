/**
 * A newcomer's first hook, from the packed tarball: a fresh project installs isohook, `isohook init` writes
 * a hook project, and that project's `npm install`, `npm test`, `tsc -p .` and `isohook test` pass. The
 * scaffold's own dependencies (vitest, typescript) come from the registry, or the npm cache where it can.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NPM, NPX, ok, packedProject, run } from "./packed-project.js";

let work: string;
let consumer: string;
let hooks: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "isohook-init-pack-"));
  ({ project: consumer } = await packedProject(work));
  hooks = join(consumer, "my-hooks");
}, 300_000);

afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe("isohook init from the installed package", { timeout: 300_000 }, () => {
  it("writes a project that installs, tests, type-checks and runs its fixtures", async () => {
    const created = await ok(NPX, ["--offline", "isohook", "init", "my-hooks"], consumer);
    expect(created.stdout).toContain("Next: cd my-hooks && npm install && npm test");
    const pkg = JSON.parse(await readFile(join(hooks, "package.json"), "utf8"));
    expect(pkg.devDependencies.isohook).toBe(`file:${join(consumer, "node_modules", "isohook")}`);

    await ok(NPM, ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], hooks);
    const tested = await ok(NPM, ["test"], hooks);
    expect(stripVTControlCharacters(tested.stdout)).toMatch(/Tests +2 passed/);
    await ok(NPX, ["--offline", "tsc", "-p", "."], hooks);
    const fixtures = await ok(NPX, ["--offline", "isohook", "test", "hook"], hooks);
    expect(fixtures.stdout).toContain("2 passed, 0 failed — hook/fixtures.jsonl");

    // The checks can fail: a Node global in the hook is a type error, as it is in the sandbox.
    await writeFile(join(hooks, "hook", "uses-node.ts"), "export const env = process.env;\n");
    const typed = await run(NPX, ["--offline", "tsc", "-p", "."], hooks);
    expect(typed.code).not.toBe(0);
    expect(typed.stdout).toContain("'process'");
  });
});
