import { symlink } from "node:fs/promises";
import { join, relative } from "node:path";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { BundleError, compileHook } from "../../src/bundler/index.js";
import { HOOK, tempFiles, tempHooks } from "./temp-hooks.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

async function project(files: Record<string, string>): Promise<string> {
  const temp = await tempHooks(files);
  cleanups.push(temp.remove);
  return temp.dir;
}

async function bundleError(files: Record<string, string>, entry = "hook", maxBundleBytes?: number) {
  const cwd = await project(files);
  const options = maxBundleBytes === undefined ? { cwd } : { cwd, maxBundleBytes };
  const error = await compileHook(entry, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BundleError);
  return error as BundleError;
}

describe("compileHook", () => {
  it("bundles a folder's index.ts into one script that leaves only the default export in __isohook_bundle", async () => {
    const cwd = await project({ "hook/index.ts": `${HOOK}export const helper = 1;\n` });
    const built = await compileHook("hook", { cwd });

    expect(built.entry).toBe("hook");
    expect(built.hash).toMatch(/^sha256-[0-9a-f]{64}$/);
    expect(built.bytes).toBe(Buffer.byteLength(built.code));
    expect(built.code).toMatch(/^var __isohook_bundle = /);
    expect(built.code).not.toContain("sourceMappingURL");
    // Our own fixture, evaluated only to pin the script format (contracts §1).
    const global: Record<string, unknown> = {};
    runInNewContext(built.code, global);
    const namespace = global.__isohook_bundle as { default: Record<string, unknown> };
    expect(Object.keys(namespace)).toEqual(["default"]);
    expect(typeof namespace.default.toolCall).toBe("function");
  });

  it("gives a file entry and its folder the same code", async () => {
    const cwd = await project({ "hook/index.ts": HOOK });
    const [folder, file] = await Promise.all([compileHook("hook", { cwd }), compileHook("hook/index.ts", { cwd })]);
    expect(file.hash).toBe(folder.hash);
    expect(file.entry).toBe("hook/index.ts");
  });

  it("gives the same hash and source map for the same source in different places", async () => {
    const files = { "index.ts": HOOK, "lib/words.ts": 'export const WORDS = ["rm", "mkfs"];\n' };
    files["index.ts"] = `import { WORDS } from "./lib/words.ts";\n${HOOK}export const n = WORDS.length;\n`;
    const a = await project(files);
    const b = await project(Object.fromEntries(Object.entries(files).map(([k, v]) => [`deep/er/${k}`, v])));
    const first = await compileHook(a, { cwd: "/" });
    const second = await compileHook("deep/er", { cwd: b });
    const again = await compileHook(a, { cwd: a });

    expect(second.hash).toBe(first.hash);
    expect(again.hash).toBe(first.hash);
    expect(second.sourceMap).toBe(first.sourceMap);
    for (const text of [first.code, first.sourceMap]) {
      expect(text).not.toContain(a);
      expect(text).not.toContain(process.cwd());
    }
    expect(JSON.parse(first.sourceMap).sources).toEqual([
      "isohook-entry.js",
      "lib/words.ts",
      "isohook:hook-sdk",
      "index.ts",
    ]);
  });

  it("keeps a source map with the original sources for stack traces", async () => {
    const cwd = await project({ "hook/index.ts": HOOK });
    const map = JSON.parse((await compileHook("hook", { cwd })).sourceMap) as {
      version: number;
      sources: string[];
      sourcesContent: string[];
      mappings: string;
    };
    expect(map.version).toBe(3);
    expect(map.sourcesContent[map.sources.indexOf("index.ts")]).toBe(HOOK);
    expect(map.mappings.length).toBeGreaterThan(0);
  });

  it("bundles a library that only tests for require", async () => {
    const cwd = await project({
      "hook/index.ts": 'import { detect } from "./lib.js";\nexport default { toolCall() { return detect(); } };\n',
      "hook/lib.js": 'export function detect() { return typeof require === "function" ? undefined : undefined; }\n',
    });
    await expect(compileHook("hook", { cwd })).resolves.toMatchObject({ entry: "hook" });
  });

  it.each([
    ["fs", 'import { readFileSync } from "fs";\nexport default { toolCall() { readFileSync("x"); } };\n'],
    ["node:fs", 'import * as fs from "node:fs";\nexport default { toolCall() { fs.rmSync("/"); } };\n'],
    ["child_process", 'import { exec } from "child_process";\nexport default { toolCall() { exec("x"); } };\n'],
    ["net", 'import net from "net";\nexport default { toolCall() { net.connect(1); } };\n'],
    ["fs/promises", 'import { rm } from "fs/promises";\nexport default { toolCall() { rm("/"); } };\n'],
    ["node:test", 'import test from "node:test";\nexport default { toolCall() { test("x"); } };\n'],
  ])("refuses the Node built-in %s naming the import and its file:line:column", async (name, source) => {
    const error = await bundleError({ "hook/index.ts": source });
    expect(error.code).toBe("node_builtin");
    expect(error.problems).toEqual([
      {
        message: expect.stringContaining(`\`${name}\` is a Node built-in`),
        file: "hook/index.ts",
        line: 1,
        column: expect.any(Number),
      },
    ]);
    expect(source.split("\n")[0]?.slice((error.problems[0]?.column ?? 0) - 1)).toMatch(new RegExp(`^"${name}"`));
    expect(error.message).toContain(`hook/index.ts:1:${error.problems[0]?.column}: \`${name}\``);
  });

  it("names the file that imports a built-in deep in the graph and a require() of one", async () => {
    const error = await bundleError({
      "hook/index.ts": 'import { x } from "./a.ts";\nexport default { toolCall() { return x; } };\n',
      "hook/a.ts": 'export { x } from "./b.cjs";\n',
      "hook/b.cjs": '\n\nconst cp = require("child_process");\nexports.x = cp;\n',
    });
    expect(error.code).toBe("node_builtin");
    expect(error.problems).toMatchObject([{ file: "hook/b.cjs", line: 3, column: 20 }]);
  });

  it("refuses a relative import that leaves the hook's root, at its line", async () => {
    const error = await bundleError({
      "secret.json": '{ "key": "hunter2" }\n',
      "hook/index.ts": `import secret from "../secret.json";\n${HOOK}export const s = secret;\n`,
    });
    expect(error.code).toBe("outside_root");
    expect(error.problems).toEqual([
      {
        message:
          "`../secret.json` resolves to secret.json, outside the hook folder hook: a bundle may only include files inside it. Move the file into the hook folder, or pass a --root that holds both if all of it is the tenant's.",
        file: "hook/index.ts",
        line: 1,
        column: 20,
      },
    ]);
  });

  it("refuses an absolute import and a symlink that point outside the root", async () => {
    const outside = await project({ "host-config.ts": 'export const password = "hunter2";\n' });
    const absolute = await bundleError({
      "hook/index.ts": `import { password } from ${JSON.stringify(join(outside, "host-config.ts"))};\nexport default { toolCall() { return password ? undefined : undefined; } };\n`,
    });
    expect(absolute.code).toBe("outside_root");

    const cwd = await project({
      "hook/index.ts": `import { password } from "./config.ts";\nexport default { toolCall() { return password ? undefined : undefined; } };\n`,
    });
    await symlink(join(outside, "host-config.ts"), join(cwd, "hook/config.ts"));
    const error = await compileHook("hook", { cwd }).catch((e: unknown) => e as BundleError);
    expect(error).toMatchObject({
      code: "outside_root",
      problems: [{ message: expect.stringContaining("hook/config.ts leads outside the hook folder hook") }],
    });
  });

  it("refuses packages from a node_modules above the hook folder, and allows the folder's own", async () => {
    const cwd = await project({
      "node_modules/left-pad/package.json": '{ "name": "left-pad", "main": "index.js" }\n',
      "node_modules/left-pad/index.js": 'module.exports = (s) => " " + s;\n',
      "hook/index.ts": `import pad from "left-pad";\n${HOOK}export const x = pad("rm");\n`,
    });
    await expect(compileHook("hook", { cwd })).rejects.toMatchObject({
      code: "outside_root",
      problems: [
        {
          message:
            "`left-pad` resolves to node_modules/left-pad/index.js, outside the hook folder hook: a bundle may only include files inside it. Install the package in the hook folder's own node_modules.",
          line: 1,
        },
      ],
    });
    await tempFiles(cwd, {
      "hook/node_modules/left-pad/package.json": '{ "name": "left-pad", "main": "index.js" }\n',
      "hook/node_modules/left-pad/index.js": 'module.exports = (s) => "own " + s;\n',
    });
    expect((await compileHook("hook", { cwd })).code).toContain('"own "');
  });

  it("takes the entry's folder as the root, never a package.json folder above it; a wider root is explicit", async () => {
    const cwd = await project({
      "package.json": "{}\n",
      "shared/words.ts": 'export const WORDS = ["rm"];\n',
      "hooks/a/index.ts": `import { WORDS } from "../../shared/words.ts";\n${HOOK}export const n = WORDS.length;\n`,
    });
    await expect(compileHook("hooks/a", { cwd })).rejects.toMatchObject({
      code: "outside_root",
      problems: [{ message: expect.stringContaining("`../../shared/words.ts` resolves to shared/words.ts"), line: 1 }],
    });
    await expect(compileHook("hooks/a", { cwd, root: "." })).resolves.toMatchObject({ entry: "hooks/a" });
    await expect(compileHook("hooks/a", { cwd, root: "shared" })).rejects.toMatchObject({ code: "outside_root" });
  });

  it("refuses import() of a literal path at its line", async () => {
    const error = await bundleError({
      "hook/index.ts": 'export default {\n  async toolCall() {\n    return (await import("./other.ts")).x;\n  },\n};\n',
      "hook/other.ts": "export const x = undefined;\n",
    });
    expect(error.code).toBe("dynamic_import");
    expect(error.problems).toMatchObject([
      { file: "hook/index.ts", line: 3, message: expect.stringContaining('import("./other.ts")') },
    ]);
  });

  it("refuses import() and require() with computed specifiers at their file:line:column", async () => {
    const error = await bundleError({
      "hook/index.ts":
        'import { load } from "./lib.js";\nconst name = "x";\nexport default {\n  async toolCall() {\n    await import(name);\n    return load(name);\n  },\n};\n',
      "hook/lib.js": "export function load(name) {\n  return require(name);\n}\n",
    });
    expect(error.code).toBe("dynamic_require");
    expect(error.problems).toEqual([
      {
        message: expect.stringContaining("`require()` with a computed specifier"),
        file: "hook/lib.js",
        line: 2,
        column: 10,
      },
      {
        message: expect.stringContaining("`import()` with a computed specifier"),
        file: "hook/index.ts",
        line: 5,
        column: 11,
      },
    ]);
  });

  it("refuses top-level await at its line", async () => {
    const error = await bundleError({ "hook/index.ts": `const config = 1;\nawait Promise.resolve(config);\n${HOOK}` });
    expect(error.code).toBe("top_level_await");
    expect(error.problems).toMatchObject([{ file: "hook/index.ts", line: 2, column: 1 }]);
  });

  it("reports a missing entry and a folder without index.ts", async () => {
    const missing = await bundleError({}, "nowhere");
    expect(missing.code).toBe("entry_not_found");
    expect(missing.message).toContain("Cannot bundle nowhere: the entry does not exist");

    const folder = await bundleError({ "hook/main.ts": HOOK });
    expect(folder.code).toBe("entry_not_found");
    expect(folder.message).toContain("hook/index.ts");
  });

  it("maps syntax errors to file:line:column", async () => {
    const error = await bundleError({ "hook/index.ts": "export default {\n  toolCall() { return 1 +; },\n};\n" });
    expect(error.code).toBe("compile_error");
    expect(error.problems).toEqual([
      { message: expect.stringMatching(/Unexpected/), file: "hook/index.ts", line: 2, column: 26 },
    ]);
  });

  it("reports an import that cannot be resolved", async () => {
    const error = await bundleError({ "hook/index.ts": `import "left-pad-that-is-not-installed";\n${HOOK}` });
    expect(error.code).toBe("unresolved_import");
    expect(error.problems).toMatchObject([
      { file: "hook/index.ts", line: 1, message: expect.stringContaining("left-pad") },
    ]);
  });

  it("refuses a module without a default export, naming the entry file", async () => {
    const error = await bundleError({ "hook/index.ts": "export const toolCall = () => undefined;\n" });
    expect(error.code).toBe("no_default_export");
    expect(error.problems).toEqual([{ message: expect.stringContaining("export default"), file: "hook/index.ts" }]);
  });

  it("refuses a bundle over maxBundleBytes, saying its size and the limit", async () => {
    const big = `export const text = "${"x".repeat(5_000)}";\n`;
    const source = `import { text } from "./big.ts";\nexport default { toolCall() { return text ? undefined : undefined; } };\n`;
    const error = await bundleError({ "hook/index.ts": source, "hook/big.ts": big }, "hook", 4_096);
    expect(error.code).toBe("bundle_too_large");
    const message = error.problems[0]?.message ?? "";
    const size = Number(
      /^The bundle is ([\d,]+) bytes, over the 4,096-byte limit \(maxBundleBytes\)/
        .exec(message)?.[1]
        ?.replaceAll(",", ""),
    );
    expect(size).toBeGreaterThan(5_000);
    expect(message).toContain("Largest inputs: hook/big.ts (5,017 bytes), hook/index.ts (");
    expect(message).not.toContain("isohook-entry");
  });

  it("refuses a bundle over the default 1 MiB limit", async () => {
    const big = `export default { toolCall() { return "${"y".repeat(1024 * 1024)}" ? undefined : undefined; } };\n`;
    const error = await bundleError({ "hook/index.ts": big });
    expect(error.code).toBe("bundle_too_large");
    expect(error.problems[0]?.message).toContain("over the 1,048,576-byte limit");
  });

  it("rejects an invalid maxBundleBytes and an aborted signal before bundling", async () => {
    const cwd = await project({ "hook/index.ts": HOOK });
    await expect(compileHook("hook", { cwd, maxBundleBytes: 0 })).rejects.toThrow(
      "Expected `maxBundleBytes` to be an integer from 1 and up, got `0`",
    );
    await expect(compileHook("hook", { cwd, signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: "AbortError",
    });
  });

  it("resolves the entry against process.cwd() by default and records it relative to that", async () => {
    const dir = await project({ "hook/index.ts": HOOK });
    const built = await compileHook(join(dir, "hook"));
    expect(built.entry).toBe(relative(process.cwd(), join(dir, "hook")));
  });
});
