import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/index.js";
import { SCHEMA_VERSION } from "../../src/store/index.js";
import { PG_SCHEMA_VERSION } from "../../src/store/postgres/postgres-schema.js";
import { GOOD_INDEX, writeHook } from "../gate/hook-modules.js";
import { dropSchema, freshSchema, pgUrl, postgresAvailable } from "../store/helpers/postgres.js";
import { fakeIO } from "./fake-io.js";

const available = await postgresAvailable();
let dir: string;
let schema: string;
let url: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "isohook-admin-pg-"));
  schema = freshSchema();
  url = pgUrl(schema);
});
afterEach(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (available) await dropSchema(schema);
});

async function cli(argv: string[], env: Record<string, string> = { USER: "alice", ISOHOOK_STORE: url }) {
  const io = fakeIO(dir, env);
  const code = await runCli(argv, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

describe.skipIf(!available)("admin commands on a PostgreSQL store", () => {
  it("migrates once, then reports the schema up to date", async () => {
    const first = await cli(["migrate", "--store", url, "--json"]);
    expect([first.code, first.stderr]).toEqual([0, ""]);
    expect(JSON.parse(first.stdout)).toMatchObject({
      store: "postgres",
      from: 0,
      to: PG_SCHEMA_VERSION,
      migrated: true,
    });
    expect(JSON.parse(first.stdout).location).toContain(`schema ${schema}`);
    const again = await cli(["migrate"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("up to date; nothing changed");
  });

  it("uploads, lists, activates, rolls back, inspects and audits through ISOHOOK_STORE", async () => {
    writeHook(dir, "policy", GOOD_INDEX);
    expect((await cli(["migrate"])).code).toBe(0);
    for (let i = 0; i < 2; i++) {
      const upload = await cli(["upload", "--tenant", "acme", "policy", "--activate", "--seed", "1"]);
      expect([upload.code, upload.stderr]).toEqual([0, ""]);
    }
    const list = await cli(["list", "--json"]);
    expect(JSON.parse(list.stdout).tenants).toMatchObject([{ tenantId: "acme", activeVersion: 2, latestVersion: 2 }]);
    expect((await cli(["rollback", "--tenant", "acme", "--json"])).stdout).toContain('"version":1');
    expect((await cli(["activate", "--tenant", "acme", "--version", "2"])).code).toBe(0);
    const versions = await cli(["versions", "--tenant", "acme", "--json"]);
    expect(versions.code).toBe(0);
    const inspect = await cli(["inspect", "--tenant", "acme", "--json"]);
    expect([inspect.code, inspect.stderr]).toEqual([0, ""]);
    const audit = await cli(["audit", "--json"]);
    expect(audit.stdout.match(/"type":"(upload|activate|rollback)"/g)).toHaveLength(6);
  });

  it.each([
    ["list"],
    ["versions", "--tenant", "acme"],
    ["activate", "--tenant", "acme", "--version", "1"],
    ["rollback", "--tenant", "acme"],
    ["inspect", "--tenant", "acme"],
    ["audit"],
    ["migrate"],
  ])("%s exits 1 with a clear error when the server is unreachable", async (...argv) => {
    const result = await cli(argv, { USER: "alice", ISOHOOK_STORE: "postgres://root:pw@127.0.0.1:1/test" });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Cannot reach the PostgreSQL store at postgres://root:***@127.0.0.1:1/test");
    expect(result.stderr).not.toContain(":pw@");
  });

  it("refuses a read on a database without a store, and creates nothing", async () => {
    const result = await cli(["list"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`No isohook store in schema "${schema}"`);
  });
});

describe("isohook migrate on a SQLite path", () => {
  it("creates the store file, then reports it up to date", async () => {
    const first = await cli(["migrate", "--store", "store.db", "--json"], { USER: "alice" });
    expect([first.code, first.stderr]).toEqual([0, ""]);
    expect(JSON.parse(first.stdout)).toEqual({
      store: "sqlite",
      location: join(dir, "store.db"),
      from: 0,
      to: SCHEMA_VERSION,
      migrated: true,
    });
    const again = await cli(["migrate", "--store", "store.db"], { USER: "alice" });
    expect(again.stdout).toContain("up to date; nothing changed");
  });
});
