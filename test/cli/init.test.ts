import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/index.js";
import { PROJECT_TOOLS } from "../../src/cli/init-template.js";
import { fakeIO } from "./fake-io.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-init-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function cli(argv: string[]) {
  const io = fakeIO(dir, {});
  const code = await runCli(argv, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

/**
 * Makes isohook and vitest resolvable from the project offline, as links to this repo in a node_modules
 * beside the project (Node and npm look there too): a link inside the hook folder that leads out of it
 * is refused by the bundler, as it would be at upload.
 */
async function installOffline(project: string) {
  const modules = join(dirname(project), "node_modules");
  await mkdir(join(modules, ".bin"), { recursive: true });
  await symlink(REPO, join(modules, "isohook"));
  await symlink(join(REPO, "node_modules/vitest"), join(modules, "vitest"));
  await symlink("../vitest/vitest.mjs", join(modules, ".bin/vitest"));
}

function npmTest(project: string) {
  // The project's own vitest, as its author runs it: none of this test run's vitest settings leak in.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(VITEST|FORCE_COLOR)/.test(key)));
  const result = spawnSync("npm", ["test"], {
    cwd: project,
    encoding: "utf8",
    timeout: 120_000,
    env: { ...env, NO_COLOR: "1" },
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

describe("isohook init", () => {
  it("creates a hook project outside the repo whose npm test passes, and fails when the hook breaks", {
    timeout: 180_000,
  }, async () => {
    const created = await cli(["init", "my-hooks"]);
    expect(created).toMatchObject({ code: 0, stderr: "" });
    expect(created.stdout).toContain("Created a hook project in my-hooks (tool.call)");
    const project = join(dir, "my-hooks");
    const pkg = JSON.parse(await readFile(join(project, "package.json"), "utf8"));
    // isohook is not on the registry: the project installs the isohook that made it.
    expect(pkg.devDependencies).toEqual({ isohook: `file:${REPO.replace(/\/$/, "")}`, ...PROJECT_TOOLS });
    const ours = JSON.parse(await readFile(join(REPO, "package.json"), "utf8")).devDependencies;
    expect(PROJECT_TOOLS).toEqual({ typescript: ours.typescript, vitest: ours.vitest });
    expect(await readFile(join(project, "hook.test.ts"), "utf8")).toContain('from "isohook/testing"');
    await installOffline(project);

    const tsc = join(REPO, "node_modules/typescript/bin/tsc");
    const typed = spawnSync(process.execPath, [tsc, "-p", project], { encoding: "utf8" });
    expect(`${typed.stdout}${typed.stderr}`).toBe("");
    expect(typed.status).toBe(0);

    const passing = npmTest(project);
    expect(passing.output).toMatch(/Tests +2 passed/);
    expect(passing.code).toBe(0);

    const index = join(project, "hook/index.ts");
    await writeFile(
      index,
      (await readFile(index, "utf8")).replace('return { type: "block"', 'return undefined; ({ type: "block"'),
    );
    const failing = npmTest(project);
    expect(failing.code).toBe(1);
    expect(failing.output).toContain("blocks rm -rf /");
  });

  it("writes a handler and a fixture for each --point, and every fixture passes in the sandbox", {
    timeout: 60_000,
  }, async () => {
    const points = ["run.start", "tool.call", "tool.result", "turn.end", "model.response"];
    const created = await cli(["init", "many", ...points.flatMap((p) => ["--point", p]), "--json"]);
    expect(JSON.parse(created.stdout)).toMatchObject({
      dir: "many",
      hookPoints: ["run.start", "model.response", "tool.call", "tool.result", "turn.end"],
    });
    const index = await readFile(join(dir, "many/hook/index.ts"), "utf8");
    for (const handler of ["runStart", "modelResponse", "toolCall", "toolResult", "turnEnd"])
      expect(index).toContain(`  ${handler}(event, ctx) {`);
    const tested = await cli(["test", "many/hook"]);
    expect(tested.stdout).toMatch(/^6 passed, 0 failed/m);
    expect(tested.code).toBe(0);
  });

  it("never overwrites: a folder with files is refused; an unknown point is a usage error", async () => {
    await mkdir(join(dir, "taken"));
    await writeFile(join(dir, "taken/index.ts"), "mine");
    expect(await cli(["init", "taken"])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("taken is not empty"),
    });
    expect(await readFile(join(dir, "taken/index.ts"), "utf8")).toBe("mine");
    expect((await cli(["init", "x", "--point", "tool.cal"])).code).toBe(2);
  });
});
