import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";

type JSONSchema = z.core.JSONSchema.BaseSchema;

import { compileHook } from "../../src/bundler/index.js";
import { parseCommandArgs } from "../../src/cli/command.js";
import { type BundleCommandDeps, createBundleCommand } from "../../src/cli/commands/bundle.js";
import { runCli } from "../../src/cli/index.js";
import { HOOK_POINT_NAMES, SDK_VERSION } from "../../src/protocol/index.js";
import { described, fakeExecutor } from "../bundler/fake-executor.js";
import { HOOK, tempHooks } from "../bundler/temp-hooks.js";
import { EVENTS, RESULTS } from "../protocol/samples.js";
import { fakeIO } from "./fake-io.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

async function run(argv: string[], cwd = REPO) {
  const io = fakeIO(cwd);
  const code = await runCli(argv, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

/** Runs the bundle command with a fake sandbox, parsing argv as runCli does. */
async function runBundle(argv: string[], deps: BundleCommandDeps, cwd: string) {
  const command = createBundleCommand(deps);
  const io = fakeIO(cwd);
  const code = await command.run(parseCommandArgs(command, argv), io);
  return { code, stdout: io.out(), stderr: io.err() };
}

let cwd: string;
let remove: () => Promise<void>;
beforeAll(async () => {
  ({ dir: cwd, remove } = await tempHooks({
    "hook/index.ts": HOOK,
    "bad/index.ts": 'import { exec } from "node:child_process";\nexport default { toolCall() { exec("x"); } };\n',
  }));
});
afterAll(() => remove());

describe("isohook bundle", () => {
  it("prints its help with --help and lists itself in the overview", async () => {
    const help = await run(["bundle", "--help"]);
    expect(help).toMatchObject({ code: 0, stderr: "" });
    expect(help.stdout).toMatch(/^Usage: isohook bundle <entry> \[--out file\] \[--root dir\] \[--json\]/);
    expect((await run(["--help"])).stdout).toMatch(/bundle\s+Bundle a hook module/);
  });

  it.each([
    [[], "Missing the hook entry"],
    [["a", "b"], "Expected one hook entry, got 2"],
    [["hook", "--bogus"], "Unknown option --bogus"],
    [["hook", "--ot"], "Unknown option --ot (did you mean --out?)"],
    [["hook", "--out", "a", "--out", "b"], "--out was given more than once: give it once"],
    [["hook", "--out"], "--out"],
  ])("exits 2 for the usage error %j", async (argv, message) => {
    const result = await run(["bundle", ...argv], cwd);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain("Usage: isohook bundle <entry>");
  });

  it("exits 1 naming a missing entry, before starting any sandbox", async () => {
    const result = await run(["bundle", "nowhere"], cwd);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toBe(
      "isohook bundle: There is no hook at nowhere: pass a hook's .ts file or a folder containing index.ts (`isohook init <dir>` makes one)\n",
    );
  });

  it("exits 1 with the problems as JSON under --json", async () => {
    const result = await run(["bundle", "bad", "--json"], cwd);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      error: {
        code: "node_builtin",
        message: expect.stringContaining("bad/index.ts:1:22: `node:child_process` is a Node built-in"),
        problems: [{ message: expect.any(String), file: "bad/index.ts", line: 1, column: 22 }],
      },
    });
  });

  it("prints the manifest of an example hook described in a real sandbox worker", async () => {
    const result = await run(["bundle", "hooks/redact-secrets", "--json"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(result.stdout)).toEqual({
      hash: (await compileHook("hooks/redact-secrets")).hash,
      bytes: expect.any(Number),
      hookPoints: ["tool.result"],
      sdkVersion: SDK_VERSION,
      entry: "hooks/redact-secrets",
    });
  });

  it("prints the manifest as one JSON line and closes the sandbox", async () => {
    const executor = fakeExecutor(described(["toolCall"]));
    const result = await runBundle(["hook", "--json"], { openExecutor: () => Promise.resolve(executor) }, cwd);
    const built = await compileHook("hook", { cwd });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout.split("\n")).toHaveLength(2);
    expect(JSON.parse(result.stdout)).toEqual({
      hash: built.hash,
      bytes: built.bytes,
      hookPoints: ["tool.call"],
      sdkVersion: SDK_VERSION,
      entry: "hook",
    });
    expect(executor.closed).toBe(true);
  });

  it("writes the script and its map with --out and prints a short summary", async () => {
    const executor = fakeExecutor(described(["toolCall", "turnEnd"]));
    const deps = { openExecutor: () => Promise.resolve(executor) };
    const result = await runBundle(["hook", "--out", "out/nested/hook.js"], deps, cwd);
    const built = await compileHook("hook", { cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `Bundled hook: ${built.bytes.toLocaleString("en-US")} bytes, ${built.hash}\nHook points: tool.call, turn.end\nWrote out/nested/hook.js and out/nested/hook.js.map\n`,
    );
    expect(await readFile(join(cwd, "out/nested/hook.js"), "utf8")).toBe(built.code);
    expect(await readFile(join(cwd, "out/nested/hook.js.map"), "utf8")).toBe(built.sourceMap);
  });

  it("exits 1 with a did-you-mean for an unknown handler and still closes the sandbox", async () => {
    const executor = fakeExecutor(described(["toolcall"]));
    const command = createBundleCommand({ openExecutor: () => Promise.resolve(executor) });
    const io = fakeIO(cwd);
    await expect(command.run(parseCommandArgs(command, ["hook"]), io)).rejects.toMatchObject({
      code: "unknown_handler",
      message: expect.stringContaining("Unknown handler `toolcall` (did you mean `toolCall`?)"),
    });
    expect(executor.closed).toBe(true);
  });

  it("passes --root to the bundler", async () => {
    const executor = fakeExecutor(described(["toolCall"]));
    const deps = { openExecutor: () => Promise.resolve(executor) };
    const outside = await runBundle(["hook", "--root", "bad"], deps, cwd).catch((e: unknown) => e);
    expect(outside).toMatchObject({ code: "outside_root" });
    expect((await runBundle(["hook", "--root", "."], deps, cwd)).code).toBe(0);
  });

  it("exits 1 when --out cannot be written", async () => {
    const executor = fakeExecutor(described(["toolCall"]));
    const command = createBundleCommand({ openExecutor: () => Promise.resolve(executor) });
    await expect(
      command.run(parseCommandArgs(command, ["hook", "--out", "hook/index.ts/x.js"]), fakeIO(cwd)),
    ).rejects.toMatchObject({
      code: "write_failed",
      message: expect.stringContaining("Pick another --out path"),
    });
  });

  it("exits 1 when the sandbox cannot start", async () => {
    const command = createBundleCommand({ openExecutor: () => Promise.reject(new Error("fork failed")) });
    await expect(command.run(parseCommandArgs(command, ["hook"]), fakeIO(cwd))).rejects.toMatchObject({
      code: "sandbox_unavailable",
      message: "Cannot start a sandbox worker to load the bundle: fork failed",
    });
  });
});

describe("isohook schema", () => {
  it("prints one line of JSON Schema for a hook point that accepts its events and results", async () => {
    const result = await run(["schema", "tool.call", "--json"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout.trimEnd().split("\n")).toHaveLength(1);
    const schema = JSON.parse(result.stdout);
    expect(schema).toMatchObject({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      title: "tool.call",
      required: ["event", "result"],
    });
    const roundTrip = z.fromJSONSchema(schema);
    for (const r of RESULTS["tool.call"])
      expect(roundTrip.safeParse({ event: EVENTS["tool.call"], result: r }).success).toBe(true);
    expect(roundTrip.safeParse({ event: EVENTS["tool.call"], result: { type: "block", reson: "x" } }).success).toBe(
      false,
    );
    expect(
      roundTrip.safeParse({ event: { ...EVENTS["tool.call"], extra: 1 }, result: RESULTS["tool.call"][0] }).success,
    ).toBe(false);
  });

  it("prints every hook point as indented JSON without an argument", async () => {
    const result = await run(["schema"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\{\n {2}"\$schema"/);
    const schema = JSON.parse(result.stdout) as JSONSchema & { properties: Record<string, JSONSchema> };
    expect(Object.keys(schema.properties)).toEqual(HOOK_POINT_NAMES);
    const all = z.fromJSONSchema(schema);
    const sample = Object.fromEntries(HOOK_POINT_NAMES.map((p) => [p, { event: EVENTS[p], result: RESULTS[p][0] }]));
    // run.end has no valid result, so a document with every point never validates; each other point does.
    expect(all.safeParse(sample).success).toBe(false);
    for (const point of HOOK_POINT_NAMES.filter((p) => p !== "run.end")) {
      const one = z.fromJSONSchema({ ...(schema.properties[point] as JSONSchema), $defs: schema.$defs ?? {} });
      for (const r of RESULTS[point])
        expect(one.safeParse({ event: EVENTS[point], result: r }).success, point).toBe(true);
      expect(one.safeParse({ event: EVENTS[point], result: { type: "nope" } }).success, point).toBe(false);
    }
  });

  it("exits 2 for an unknown hook point with a did-you-mean and the valid points", async () => {
    const result = await run(["schema", "toolcall"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `Unknown hook point \`toolcall\` (did you mean \`tool.call\`?). Valid hook points: ${HOOK_POINT_NAMES.join(", ")}`,
    );
    expect((await run(["schema", "banana"])).stderr).toContain("Unknown hook point `banana`. Valid hook points:");
  });

  it.each([[["tool.call", "turn.end"]], [["--nope"]]])("exits 2 for %j", async (argv) => {
    expect((await run(["schema", ...argv])).code).toBe(2);
  });

  it("prints its help with --help", async () => {
    const result = await run(["schema", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: isohook schema \[hook-point\] \[--json\]/);
  });
});
