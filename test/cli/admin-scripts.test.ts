import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TenantId } from "../../src/protocol/index.js";
import { SqliteBundleStore } from "../../src/store/index.js";
import { fakeBundle } from "../store/helpers/bundles.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "isohook-scripts-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function script(name: string, args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, ["--no-node-snapshot", "--import", "tsx", `scripts/${name}.ts`, ...args], {
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("admin scripts", () => {
  it("run their command with the process's argv, environment and exit code", async () => {
    const path = join(dir, "store.db");
    const store = await SqliteBundleStore.open(path);
    await store.upload({ tenantId: "acme" as TenantId, ...fakeBundle("a1"), by: "ops", activate: true });
    await store.close();
    const listed = script("list-hooks", ["--json"], { ISOHOOK_STORE: path });
    expect([listed.code, listed.stderr]).toEqual([0, ""]);
    expect(JSON.parse(listed.stdout)).toMatchObject({ tenants: [{ tenantId: "acme", activeVersion: 1 }] });
    const refused = script("rollback-hook", ["--tenant", "acme", "--by", "ops", "--store", path]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("no earlier activation");
  });
});
