/**
 * docs/getting-started.md, replayed from the packed tarball: a fresh project installs isohook, and the
 * page's first-hook commands run in order (`isohook init`, the scaffold's `npm install`, `npm test`,
 * `tsc -p .`, `isohook test`), each exiting 0; then its deploy program type-checks with a strict `tsc`,
 * without casts, and deploys the hook. The scaffold's own dependencies (vitest, typescript) come from the
 * registry, or the npm cache where it can.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NPX, ok, packedProject, type Ran, REPO, run } from "./packed-project.js";

let work: string;
let consumer: string;
let page: string;

/** The fenced block of `lang` right after `heading` on the page. */
function blockAfter(heading: string, lang: string): string {
  const at = page.indexOf(`\n${heading}\n`);
  const start = page.indexOf(`\`\`\`${lang}\n`, at);
  if (at === -1 || start === -1) throw new Error(`docs/getting-started.md has no ${lang} block under ${heading}`);
  return page.slice(start + lang.length + 4, page.indexOf("\n```", start + 1) + 1);
}

function sh(command: string, cwd: string): Promise<Ran> {
  return new Promise((done) => {
    execFile("sh", ["-c", command], { cwd, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  page = await readFile(join(REPO, "docs/getting-started.md"), "utf8");
  work = await mkdtemp(join(tmpdir(), "isohook-init-pack-"));
  ({ project: consumer } = await packedProject(work, ["typescript", "@types/node"]));
}, 300_000);

afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe("docs/getting-started.md from the packed tarball", { timeout: 600_000 }, () => {
  it("runs the first-hook commands in a fresh project, each exiting 0", async () => {
    const commands = blockAfter("## Your first hook", "sh")
      .split("\n")
      .filter((line) => line.startsWith("$ "))
      .map((line) =>
        line
          .slice(2)
          .replace(/\s+#.*$/, "")
          .trim(),
      );
    expect(commands[0]).toMatch(/^npm install \.\/isohook-[\d.]+\.tgz$/);
    let cwd = consumer;
    const outputs: Record<string, string> = {};
    // The first line is done: the project installed the tarball with the repo's native builds.
    for (const command of commands.slice(1)) {
      const cd = /^cd (\S+)$/.exec(command);
      if (cd !== null) {
        cwd = join(cwd, cd[1] ?? "");
        continue;
      }
      const ran = await sh(command, cwd);
      if (ran.code !== 0) throw new Error(`\`${command}\` exited ${ran.code}:\n${ran.stdout}\n${ran.stderr}`);
      outputs[command] = stripVTControlCharacters(`${ran.stdout}${ran.stderr}`);
    }
    const hooks = join(consumer, "my-hooks");
    const pkg = JSON.parse(await readFile(join(hooks, "package.json"), "utf8"));
    expect(pkg.devDependencies.isohook).toBe(`file:${join(consumer, "node_modules", "isohook")}`);
    expect(outputs["npm test"]).toMatch(/Tests +2 passed/);
    expect(outputs["npx isohook test hook"]).toContain("2 passed, 0 failed — hook/fixtures.jsonl");

    // The type check can fail: a Node global in the hook is a type error, as it is in the sandbox.
    await writeFile(join(hooks, "hook", "uses-node.ts"), "export const env = process.env;\n");
    const typed = await run(NPX, ["--offline", "tsc", "-p", "."], hooks);
    await rm(join(hooks, "hook", "uses-node.ts"));
    expect(typed.code).not.toBe(0);
    expect(typed.stdout).toContain("'process'");
  });

  it("type-checks the deploy program with a strict tsc, no casts, and deploys the hook", async () => {
    const hooks = join(consumer, "my-hooks");
    await writeFile(join(hooks, "deploy.ts"), blockAfter("## Deploying from a program", "ts"));
    const strict = {
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        types: ["node"],
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: true,
        outDir: "out",
      },
      files: ["deploy.ts"],
    };
    await writeFile(join(hooks, "tsconfig.deploy.json"), JSON.stringify(strict));
    await ok(join(consumer, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.deploy.json"], hooks);
    const deployed = await ok(process.execPath, ["--no-node-snapshot", join(hooks, "out", "deploy.js")], hooks);
    expect(deployed.stdout).toBe("acme: version 1 stored, active: true\n");
  });
});
