import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/index.js";
import type { TenantId } from "../../src/protocol/index.js";
import { SqliteBundleStore } from "../../src/store/index.js";
import { fakeBundle } from "../store/helpers/bundles.js";
import { fileDigest } from "../store/helpers/files.js";

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "isohook-admin-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function cli(argv: string[], env: Record<string, string | undefined> = { USER: "alice" }) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env,
    cwd: dir,
  });
  return { code, stdout, stderr, json: () => JSON.parse(stdout) as Record<string, unknown> };
}

/** acme: v1, v2 (v2 active, activated after v1); globex: v1 (inactive). Default store path. */
async function seed(): Promise<void> {
  const store = await SqliteBundleStore.open(join(dir, ".isohook/store.db"));
  const acme = "acme" as TenantId;
  await store.upload({
    tenantId: acme,
    ...fakeBundle("a1"),
    by: "ops",
    activate: true,
    gateReport: { type: "passed" },
  });
  await store.upload({
    tenantId: acme,
    ...fakeBundle("a2", ["tool.call", "tool.result"]),
    by: "ops",
    config: { strict: true },
    activate: true,
  });
  await store.upload({ tenantId: "globex" as TenantId, ...fakeBundle("g1"), by: "ops" });
  await store.close();
}

describe("admin commands on the store", () => {
  it.each(["list", "versions", "activate", "rollback", "inspect", "audit", "upload"])("%s has --help", async (name) => {
    const result = await cli([name, "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Usage: isohook ${name}`));
    expect(result.stdout).toContain("--json");
    expect(result.stdout).toContain("--store");
  });

  it("lists tenants as a table and as JSON", async () => {
    await seed();
    const text = await cli(["list"]);
    expect(text.code).toBe(0);
    expect(text.stdout.split("\n")[0]).toMatch(/^TENANT\s+ACTIVE\s+HASH\s+LATEST\s+VERSIONS\s+UPDATED$/);
    expect(text.stdout).toMatch(/acme\s+v2\s+[0-9a-f]{12}\s+v2\s+2/);
    expect(text.stdout).toMatch(/globex\s+-\s+-\s+v1\s+1/);
    const json = await cli(["list", "--json", "--tenant", "acme"]);
    expect(json.json()).toMatchObject({
      tenants: [{ tenantId: "acme", activeVersion: 2, latestVersion: 2, versionCount: 2 }],
    });
  });

  it("lists versions with the active one marked", async () => {
    await seed();
    const text = await cli(["versions", "--tenant", "acme"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ v1\s/m);
    expect(text.stdout).toMatch(/^\*v2\s.*tool\.call,tool\.result\s+ops/m);
    const json = await cli(["versions", "--tenant", "acme", "--json"]);
    expect((json.json().versions as { version: number; active: boolean }[]).map((v) => [v.version, v.active])).toEqual([
      [1, false],
      [2, true],
    ]);
  });

  it("activates, rolls back and audits who did it", async () => {
    await seed();
    expect((await cli(["activate", "--tenant", "globex", "--version", "1", "--by", "bob"])).stdout).toBe(
      "globex: version 1 is active (was none).\n",
    );
    expect((await cli(["activate", "--tenant", "globex", "--version", "1"])).stdout).toContain("already active");
    const rolled = await cli(["rollback", "--tenant", "acme", "--json"]);
    expect(rolled.json()).toEqual({
      tenantId: "acme",
      version: 1,
      previousVersion: 2,
      changed: true,
      endedRollout: null,
    });
    const audit = await cli(["audit", "--json"]);
    const entries = audit.json().entries as { tenantId: string; type: string; by: string }[];
    expect(entries.slice(-2).map((e) => [e.tenantId, e.type, e.by])).toEqual([
      ["globex", "activate", "bob"],
      ["acme", "rollback", "alice"],
    ]);
    const table = await cli(["audit", "--tenant", "acme", "--limit", "1"]);
    expect(table.stdout.trim().split("\n")).toHaveLength(2);
    expect(table.stdout).toMatch(/acme\s+rollback\s+v1\s+v2\s+alice/);
  });

  it("inspects the active version and a given one", async () => {
    await seed();
    const active = await cli(["inspect", "--tenant", "acme"]);
    expect(active.code).toBe(0);
    expect(active.stdout).toMatch(/^acme v2 \(active\)$/m);
    expect(active.stdout).toMatch(/hook points\s+tool\.call, tool\.result/);
    expect(active.stdout).toMatch(/config\s+\{"strict":true\}/);
    expect(active.stdout).toContain("(no gate report recorded)");
    const v1 = await cli(["inspect", "--tenant", "acme", "--version", "1", "--json"]);
    expect(v1.json()).toMatchObject({ version: 1, active: false, config: {}, gateReport: { type: "passed" } });
    const none = await cli(["inspect", "--tenant", "globex"]);
    expect([none.code, none.stderr]).toEqual([1, expect.stringContaining("has no active version. Pass --version")]);
  });

  it("says what to do when there is nothing to roll back to, or no such version", async () => {
    await seed();
    await cli(["rollback", "--tenant", "acme"]);
    const nothing = await cli(["rollback", "--tenant", "acme"]);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain("isohook activate --tenant acme --version <n>");
    const missing = await cli(["activate", "--tenant", "acme", "--version", "9"]);
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining("isohook versions --tenant acme")]);
    const unknown = await cli(["versions", "--tenant", "nobody"]);
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining("isohook list")]);
  });

  it.each([
    [["versions", "--tenant", "../x"]],
    [["activate", "--tenant", "a'; DROP TABLE tenants; --", "--version", "1"]],
    [["rollback", "--tenant", "Acme"]],
    [["inspect", "--tenant", ""]],
    [["activate", "--tenant", "acme", "--version", "0"]],
    [["activate", "--tenant", "acme", "--version", "1.5"]],
    [["activate", "--tenant", "acme", "--version", "1; DROP TABLE versions"]],
    [["activate", "--tenant", "acme"]],
    [["versions"]],
    [["audit", "--limit", "0"]],
    [["list", "stray"]],
  ])("rejects %j as a usage error and changes nothing", async (argv) => {
    await seed();
    const before = fileDigest(join(dir, ".isohook/store.db"));
    const result = await cli(argv);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`Run \`isohook ${argv[0]} --help\``);
    expect(fileDigest(join(dir, ".isohook/store.db"))).toBe(before);
  });

  it("audits the OS user name when $USER is not set, and --by still wins", async () => {
    await seed();
    expect((await cli(["rollback", "--tenant", "acme"], {})).code).toBe(0);
    expect((await cli(["activate", "--tenant", "acme", "--version", "2", "--by", "carol"], {})).code).toBe(0);
    const entries = (await cli(["audit", "--json", "--limit", "2"])).json().entries as { by: string }[];
    expect(entries.map((e) => e.by)).toEqual([userInfo().username, "carol"]);
  });

  it("does not create a store for read commands and says how to get one", async () => {
    const result = await cli(["list"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("No store at");
    expect(result.stderr).toContain("ISOHOOK_STORE");
    expect(existsSync(join(dir, ".isohook"))).toBe(false);
  });

  it("finds the store through --store, then ISOHOOK_STORE", async () => {
    await seed();
    const moved = join(dir, ".isohook/store.db");
    expect((await cli(["list", "--json", "--store", moved])).code).toBe(0);
    const fromEnv = await cli(["list", "--json"], { ISOHOOK_STORE: moved });
    expect((fromEnv.json().tenants as unknown[]).length).toBe(2);
    const wrongEnv = await cli(["list"], { ISOHOOK_STORE: join(dir, "elsewhere.db") });
    expect(wrongEnv.code).toBe(1);
  });

  it("refuses a foreign file as the store and leaves it untouched", async () => {
    const file = join(dir, "notes.db");
    writeFileSync(file, "not a database");
    const before = fileDigest(file);
    for (const argv of [["list"], ["activate", "--tenant", "acme", "--version", "1"]]) {
      const result = await cli([...argv, "--store", file]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("is not an isohook store");
    }
    expect(fileDigest(file)).toBe(before);
    expect(existsSync(`${file}-wal`)).toBe(false);
  });
});
