/**
 * Items 1 and 2 of issue 16 and the source-map check of item 6: a hook folder is the root. Symlinks that
 * leave it (to the host or to another tenant), hard links, files above it (a parent package.json,
 * tsconfig.json or node_modules) and source map comments cannot bring anything from outside into a
 * bundle, a source map, a fixture run or an error message. Each case ends with a clear error, and the
 * deploy gate refuses the folder without using the sandbox.
 */
import { link, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BundleError, compileHook } from "../../src/bundler/index.js";
import { runDeployGate } from "../../src/gate/index.js";
import { TenantId } from "../../src/protocol/index.js";
import { FIXTURE, hostWithTenants, NOOP_HOOK, SECRETS, testCommandIn, untouchableExecutor } from "./tenants.js";

let host: Awaited<ReturnType<typeof hostWithTenants>>;
beforeEach(async () => {
  host = await hostWithTenants();
});
afterEach(() => host.remove());

const tenantId = TenantId.parse("attacker");

/** The deploy gate on the attacker's folder, with a sandbox that must not be touched. */
async function gate() {
  const executor = untouchableExecutor();
  const result = await runDeployGate({ entry: "tenants/attacker", cwd: host.base, executor, tenantId });
  return { result, used: executor.used, text: JSON.stringify(result) };
}

/** `isohook test` on the attacker's folder (or as `argv` says). */
function testCommand(argv: string[] = ["tenants/attacker"]) {
  return testCommandIn(host.base, argv);
}

async function bundleError(entry = "tenants/attacker"): Promise<BundleError> {
  const error = await compileHook(entry, { cwd: host.base }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BundleError);
  return error as BundleError;
}

function expectNoSecrets(text: string): void {
  for (const secret of SECRETS) expect(text).not.toContain(secret);
}

describe("symlinks that leave the hook folder", () => {
  it.each([
    ["a host file", "host.env"],
    ["another tenant's fixtures", "tenants/victim/fixtures.jsonl"],
  ])("refuse fixtures.jsonl linked to %s, quoting nothing of it, before any sandbox", async (_, target) => {
    await host.write("index.ts", NOOP_HOOK);
    await host.link("fixtures.jsonl", target);
    const { result, used, text } = await gate();
    expect(result.report.reasons).toEqual([
      {
        code: "invalid_fixtures",
        file: "fixtures.jsonl",
        message:
          "fixtures.jsonl leads outside the hook folder tenants/attacker (a symbolic link): isohook reads only files inside it. Replace the link with the file itself.",
      },
    ]);
    expect(used).toEqual([]);
    expectNoSecrets(text);
    const test = await testCommand();
    expect([test.code, test.opened]).toEqual(["outside_folder", 0]);
    expectNoSecrets(test.message ?? "");
  });

  it("refuses an index.ts linked to another tenant's hook instead of bundling that hook", async () => {
    await host.link("index.ts", "tenants/victim/index.ts");
    await host.write("fixtures.jsonl", FIXTURE);
    const error = await bundleError();
    expect(error.code).toBe("outside_root");
    expect(error.problems).toEqual([
      {
        message:
          "tenants/attacker/index.ts leads outside the hook folder tenants/attacker (a symbolic link): isohook bundles only files inside it. Replace the link with the file itself.",
      },
    ]);
    const { result, used } = await gate();
    expect([result.report.reasons.map((r) => r.code), used]).toEqual([["bundle_failed"], []]);
    expect((await testCommand()).opened).toBe(0);
  });

  it("refuses a file linked to another tenant's before bundling, naming the link", async () => {
    await host.write(
      "index.ts",
      `import { VICTIM_SECRET } from "./shared.ts";\nexport default { toolCall() { return { type: "block", reason: VICTIM_SECRET }; } };\n`,
    );
    await host.link("shared.ts", "tenants/victim/secret.ts");
    const error = await bundleError();
    expect(error.code).toBe("outside_root");
    expect(error.problems).toEqual([
      {
        message:
          "tenants/attacker/shared.ts leads outside the hook folder tenants/attacker (a symbolic link): isohook reads only files inside it. Replace the link with the file itself.",
      },
    ]);
  });

  it("refuses a node_modules entry linked to a package outside the folder", async () => {
    await host.write(
      "index.ts",
      `import code from "host-pkg";\nexport default { toolCall() { return { type: "block", reason: code }; } };\n`,
    );
    await mkdir(join(host.attacker, "node_modules"));
    await host.link("node_modules/host-pkg", "node_modules/host-pkg");
    const error = await bundleError();
    expect(error.code).toBe("outside_root");
    expect(error.problems[0]?.message).toMatch(
      /^tenants\/attacker\/node_modules\/host-pkg leads outside the hook folder/,
    );
  });

  it("follows a symlink that stays inside the folder", async () => {
    await host.write("lib/real.ts", "export const WORD = 'inside';\n");
    await host.write(
      "index.ts",
      `import { WORD } from "./word.ts";\nexport default { toolCall() { return { type: "block", reason: WORD }; } };\n`,
    );
    await host.link("word.ts", "tenants/attacker/lib/real.ts");
    expect((await compileHook("tenants/attacker", { cwd: host.base })).code).toContain("inside");
  });

  it("refuses hard links, whose other names may be outside the folder", async () => {
    await host.write(
      "index.ts",
      `import text from "./notes.txt";\nexport default { toolCall() { return { type: "block", reason: text }; } };\n`,
    );
    await link(join(host.base, "host.env"), join(host.attacker, "notes.txt"));
    const error = await bundleError();
    expect(error.code).toBe("unsafe_file");
    expect(error.problems[0]?.message).toBe(
      "tenants/attacker/notes.txt is a hard link (2 names): isohook cannot tell whether another name is a file outside tenants/attacker, so it reads no hard-linked file from a hook folder. Replace the link with a copy (cp).",
    );

    await host.write("index.ts", NOOP_HOOK);
    await link(join(host.victim, "fixtures.jsonl"), join(host.attacker, "fixtures.jsonl"));
    const { result, used } = await gate();
    expect(result.report.reasons).toMatchObject([
      { code: "invalid_fixtures", message: expect.stringContaining("is a hard link") },
    ]);
    expect(used).toEqual([]);
  });
});

describe("the root is the hook folder, not a project above it", () => {
  it.each([
    ["a relative path above the folder", 'import s from "../../platform-secrets.json";', "outside_root"],
    ["a package from a node_modules above it", 'import s from "host-pkg";', "outside_root"],
    ["a name mapped by a tsconfig.json above it", 'import s from "platform-secrets";', "unresolved_import"],
    ["an import map of a package.json above it", 'import s from "#secrets";', "outside_root"],
  ])("refuses %s", async (_, line, code) => {
    await host.write(
      "index.ts",
      `${line}\nexport default { toolCall() { return { type: "block", reason: JSON.stringify(s) }; } };\n`,
    );
    const error = await bundleError();
    expect(error.code).toBe(code);
    expect(error.problems[0]).toMatchObject({ file: "tenants/attacker/index.ts", line: 1 });
    expectNoSecrets(error.message);
  });

  it("bundles with the folder's own package.json, tsconfig.json and node_modules", async () => {
    await host.write("package.json", '{ "name": "attacker-hook" }\n');
    await host.write(
      "tsconfig.json",
      '{ "compilerOptions": { "baseUrl": ".", "paths": { "words": ["./lib/words.ts"] } } }\n',
    );
    await host.write("lib/words.ts", "export const WORDS = ['own'];\n");
    await host.write("node_modules/own-pkg/package.json", '{ "name": "own-pkg", "main": "index.js" }\n');
    await host.write("node_modules/own-pkg/index.js", 'module.exports = "OWN_PKG";\n');
    await host.write(
      "index.ts",
      `import { WORDS } from "words";\nimport own from "own-pkg";\nexport default { toolCall() { return { type: "block", reason: WORDS[0] + own }; } };\n`,
    );
    const built = await compileHook("tenants/attacker", { cwd: host.base });
    expect(built.code).toContain("OWN_PKG");
    expect(built.code).toContain("own");
  });
});

describe("source maps", () => {
  it.each([
    ["a host source map", "../../host-app.js.map"],
    ["an absolute path", "HOST/host-app.js.map"],
    ["a host file that is no source map", "../../host.env"],
  ])("keep a sourceMappingURL comment naming %s out of the bundle's map", async (_, url) => {
    const target = url.replace("HOST", host.base);
    await host.write(
      "index.js",
      `export default { toolCall() { return undefined; } };\n//# sourceMappingURL=${target}\n`,
    );
    const built = await compileHook("tenants/attacker/index.js", { cwd: host.base });
    const map = JSON.parse(built.sourceMap) as { sources: string[]; sourcesContent: string[] };
    expect(map.sources).toEqual(["isohook-entry.js", "index.js"]);
    expectNoSecrets(built.sourceMap);
    expect(built.sourceMap).not.toContain("/srv/platform");
  });
});
