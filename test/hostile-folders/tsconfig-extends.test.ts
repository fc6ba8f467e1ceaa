/**
 * A tenant's tsconfig.json `extends` is read like any file of its folder: inside the root, a regular file,
 * size-capped, opened non-blocking. A token file, `/dev/zero` or a FIFO outside the folder is refused by
 * the name the tenant wrote, quoting nothing of it, before any sandbox, in `bundle`, `test` and the gate.
 */
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BundleError, compileHook } from "../../src/bundler/index.js";
import { runDeployGate } from "../../src/gate/index.js";
import { TenantId } from "../../src/protocol/index.js";
import { FIXTURE, hostWithTenants, testCommandIn, untouchableExecutor } from "./tenants.js";

let host: Awaited<ReturnType<typeof hostWithTenants>>;
beforeEach(async () => {
  host = await hostWithTenants();
  await host.write("index.ts", 'export default { toolCall() { return { type: "block", reason: "own" }; } };\n');
  await host.write("fixtures.jsonl", FIXTURE);
  // A mounted secret: one bare token, no JSON; esbuild's parse error quoted it.
  await writeFile(join(host.base, "token"), "HOSTTOKEN_s3cr3t\n");
  execFileSync("mkfifo", [join(host.base, "pipe")]);
});
afterEach(() => host.remove());

async function bundleError(): Promise<BundleError> {
  const error = await compileHook("tenants/attacker", { cwd: host.base }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BundleError);
  return error as BundleError;
}

describe("a tsconfig.json extends outside the hook folder", () => {
  it.each([
    ["a host token file", "../../token"],
    ["the same by absolute path", "HOST/token"],
    ["/dev/zero", "/dev/zero"],
    ["a FIFO", "../../pipe"],
    ["a host package", "host-pkg/package.json"],
  ])("refuses %s, naming what the tenant wrote and quoting nothing of it", async (_, target) => {
    const name = target.replace("HOST", host.base);
    await host.write("tsconfig.json", JSON.stringify({ extends: name }));
    const error = await bundleError();
    expect(["outside_root", "unsafe_file"]).toContain(error.code);
    expect(error.message).toContain(`extends ${JSON.stringify(name)}`);
    expect(error.message).not.toContain("HOSTTOKEN");
    expect(error.message).not.toContain("HOST_PKG_CODE");
  });

  it("refuses a link in the folder to the token file, through a chain", async () => {
    await host.write("tsconfig.json", '{ "extends": "./base.json" }');
    await host.link("base.json", "token");
    const error = await bundleError();
    expect(error.code).toBe("outside_root");
    expect(error.message).not.toContain("HOSTTOKEN");
  });

  it("keeps the token out of `isohook test` and the deploy gate report", async () => {
    await host.write("tsconfig.json", '{ "extends": "../../token" }');
    const test = await testCommandIn(host.base, ["tenants/attacker", "--json"]);
    expect(test.code).toBe("outside_root");
    expect(test.message).toContain("extends");
    expect(test.message).not.toContain("HOSTTOKEN");
    const executor = untouchableExecutor();
    const gate = await runDeployGate({
      entry: "tenants/attacker",
      cwd: host.base,
      executor,
      tenantId: TenantId.parse("attacker"),
    });
    expect(gate.type).toBe("rejected");
    expect(JSON.stringify(gate)).toContain("extends");
    expect(JSON.stringify(gate)).not.toContain("HOSTTOKEN");
    expect(executor.used).toEqual([]);
  });
});

describe("a tsconfig.json extends inside the hook folder", () => {
  it("follows a chain through the folder's own node_modules, with comments and paths relative to each config", async () => {
    await host.write(
      "node_modules/shared-config/tsconfig.json",
      '{ // shared\n "compilerOptions": { "baseUrl": "../..", "paths": { "words": ["./lib/words.ts"] }, },\n}\n',
    );
    await host.write("config/base.json", '{ "extends": "shared-config", /* own */ "compilerOptions": {} }');
    await host.write("tsconfig.json", '{ "extends": ["./config/base"] }');
    await host.write("lib/words.ts", "export const WORDS = ['from-paths'];\n");
    await host.write(
      "index.ts",
      'import { WORDS } from "words";\nexport default { toolCall() { return { type: "block", reason: WORDS[0] }; } };\n',
    );
    const built = await compileHook("tenants/attacker", { cwd: host.base });
    expect(built.code).toContain("from-paths");
  });

  it("refuses a loop", async () => {
    await host.write("tsconfig.json", '{ "extends": "./a.json" }');
    await host.write("a.json", '{ "extends": "./tsconfig.json" }');
    const error = await bundleError();
    expect(error.message).toContain("loops back");
  });
});
