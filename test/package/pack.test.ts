/**
 * The published package as a user gets it: `npm pack` of the built dist/, the tarball installed into a
 * fresh project outside the repo (from the local npm cache where it can), then that project's own commands: the CLI
 * without tsx, a hook of its own that imports `isohook/hook-sdk`, its own strict `tsc` over code that
 * imports `isohook`, and that code run through the process sandbox.
 */
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NPX, ok, packedProject, REPO, run } from "./packed-project.js";

const HOOK = `import { defineHooks } from "isohook/hook-sdk";

export default defineHooks({
  toolCall(event) {
    const command = String(event.call.args.command ?? "");
    console.log("checking", command);
    if (command.includes("rm -rf")) return { type: "block", reason: \`no rm -rf: \${command}\` };
  },
});
`;

const FIXTURES = `${[
  { point: "tool.call", event: call("rm -rf /"), expect: { type: "block", reason: "no rm -rf: rm -rf /" } },
  { point: "tool.call", event: call("ls"), expect: { noop: true } },
]
  .map((line) => JSON.stringify(line))
  .join("\n")}\n`;

function call(command: string) {
  return { call: { id: "c1", name: "shell", args: { command } }, batch: { index: 0, size: 1 } };
}

const APP = `import { bundleFromEntry, createHookRuntime, defineTool, fixedBundleSource, scriptedModel } from "isohook";
import { createHookExecutor } from "isohook/sandbox";
import { z } from "zod";

const executor = await createHookExecutor({ workers: 1, spareWorker: false, limits: { timeoutMs: 1_000 } });
try {
  const bundle = await bundleFromEntry("hooks/no-rm", { tenantId: "acme", executor });
  const runtime = await createHookRuntime({ executor, bundles: fixedBundleSource([bundle]) });
  const shell = defineTool({
    name: "shell",
    description: "Runs a shell command",
    parameters: z.object({ command: z.string() }),
    execute: async ({ command }) => \`ran \${command}\`,
  });
  const result = await runtime.runAgent({
    tenantId: "acme",
    input: "Clean up",
    tools: [shell],
    model: scriptedModel([
      { toolCalls: [{ name: "shell", args: { command: "rm -rf /" } }, { name: "shell", args: { command: "du -sh" } }] },
      { text: "done" },
    ]),
  });
  const tools = result.transcript.filter((m) => m.role === "tool").map((m) => JSON.stringify(m));
  console.log(JSON.stringify({ stopReason: result.stopReason, output: result.output, tools }));
  await runtime.close();
} finally {
  await executor.close();
}
`;

/** The consumer's own strict config (`skipLibCheck` as `tsc --init` sets it); hooks get tsconfig.hook.json. */
const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    types: ["node"],
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: true,
    outDir: "out",
  },
  files: ["app.ts"],
};

const HOOK_TSCONFIG = { extends: "isohook/tsconfig.hook.json", include: ["**/*.ts"] };

let work: string;
let project: string;
let installMs: number;
let reused: string[];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "isohook-pack-"));
  ({ project, installMs, reused } = await packedProject(work, ["typescript", "@types/node", "zod"]));
  await mkdir(join(project, "hooks", "no-rm"), { recursive: true });
  await writeFile(join(project, "hooks", "no-rm", "index.ts"), HOOK);
  await writeFile(join(project, "hooks", "no-rm", "fixtures.jsonl"), FIXTURES);
  await writeFile(join(project, "hooks", "tsconfig.json"), JSON.stringify(HOOK_TSCONFIG));
  await writeFile(join(project, "app.ts"), APP);
  await writeFile(join(project, "tsconfig.json"), JSON.stringify(TSCONFIG));
}, 300_000);

afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe("the packed package", { timeout: 180_000 }, () => {
  it("installs from its tarball in seconds, reusing the repo's native builds", async () => {
    expect(reused).toContain("better-sqlite3");
    expect(reused.filter((name) => name.startsWith("isolated-vm-"))).toHaveLength(1);
    expect(installMs).toBeLessThan(120_000);
    expect((await lstat(join(project, "node_modules", "isohook", "dist", "src", "index.js"))).isFile()).toBe(true);
  });

  it("ships dist/, the licence, the guides and the CLI output schema, the example hooks and scenarios, and no sources or tests", async () => {
    const shipped = await readdir(join(project, "node_modules", "isohook"));
    expect(shipped.sort()).toEqual([
      "LICENSE",
      "README.md",
      "dist",
      "docs",
      "hooks",
      "package.json",
      "scenarios",
      "tsconfig.hook.json",
    ]);
    // The guides the README links to ship with it.
    const docs = (await readdir(join(REPO, "docs"))).filter((name) => name.endsWith(".md"));
    expect(docs).toContain("getting-started.md");
    expect((await readdir(join(project, "node_modules", "isohook", "docs"))).sort()).toEqual(
      [...docs, "cli-output.schema.json"].sort(),
    );
    const dist = await readdir(join(project, "node_modules", "isohook", "dist"));
    expect(dist.sort()).toEqual(["sandbox", "src"]);
  });

  it("prints its version with npx isohook --version, without tsx", async () => {
    const manifest = JSON.parse(await readFile(join(REPO, "package.json"), "utf8")) as { version: string };
    const ran = await ok(NPX, ["--offline", "isohook", "--version"], project);
    expect(ran.stdout).toBe(`isohook ${manifest.version}\n`);
    await expect(lstat(join(project, "node_modules", "tsx"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("bundles a hook of the project's own that imports isohook/hook-sdk", async () => {
    const ran = await ok(NPX, ["--offline", "isohook", "bundle", "hooks/no-rm", "--json"], project);
    expect(JSON.parse(ran.stdout)).toMatchObject({ hookPoints: ["tool.call"], entry: "hooks/no-rm" });
  });

  it("tests that hook's fixtures through the process sandbox", async () => {
    const ran = await ok(NPX, ["--offline", "isohook", "test", "hooks/no-rm"], project);
    expect(ran.stdout).toContain("2 passed, 0 failed");
  });

  it("type-checks hooks with the shipped hook tsconfig: console typed, Node not", async () => {
    await ok(NPX, ["--offline", "tsc", "-p", "hooks"], project);
    await writeFile(join(project, "hooks", "no-rm", "uses-node.ts"), "export const env = process.env;\n");
    const ran = await run(NPX, ["--offline", "tsc", "-p", "hooks"], project);
    await rm(join(project, "hooks", "no-rm", "uses-node.ts"));
    expect(ran.code).not.toBe(0);
    expect(ran.stdout).toContain("uses-node.ts");
    expect(ran.stdout).toContain("'process'");
  });

  it("type-checks the project's code against isohook's declarations with its own strict tsc, then runs it", async () => {
    await ok(NPX, ["--offline", "tsc", "-p", "."], project);
    const ran = await ok(process.execPath, [join(project, "out", "app.js")], project);
    const result = JSON.parse(ran.stdout.trim().split("\n").at(-1) ?? "") as { stopReason: string; tools: string[] };
    expect(result.stopReason).toBe("completed");
    expect(result.tools).toHaveLength(2);
    expect(result.tools[0]).toContain("blocked: no rm -rf: rm -rf /");
    expect(result.tools[1]).toContain("ran du -sh");
  });
});
