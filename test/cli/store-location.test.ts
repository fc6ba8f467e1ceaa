/**
 * A bad PostgreSQL store location (SQL, upper case, 49 characters or an empty name as `?schema=`) is a
 * usage error: exit 2, one `{"error": …}` line under --json, no stack trace, nothing sent to a database.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/index.js";
import { fakeIO } from "./fake-io.js";

const SCHEMAS = ["x;DROP TABLE bundles", "Hooks", "a".repeat(49), ""];
const COMMANDS = [["list"], ["versions", "--tenant", "acme"], ["migrate"], ["stats", "--tenant", "acme"]];

describe.each(COMMANDS)("isohook %s with a bad ?schema=", (...command) => {
  it.each(SCHEMAS)("refuses %j as a usage error, in the one JSON error shape", async (schema) => {
    const store = `postgres://root@127.0.0.1:5432/test?schema=${encodeURIComponent(schema)}`;
    const io = fakeIO(process.cwd());
    expect(await runCli([...command, "--store", store], io)).toBe(2);
    expect(io.err()).toContain("Invalid PostgreSQL schema name");
    expect(io.err()).not.toMatch(/internal error|\n\s+at /);

    const json = fakeIO(process.cwd());
    expect(await runCli([...command, "--store", store, "--json"], json)).toBe(2);
    const lines = json.out().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({
      error: { code: "usage", message: expect.stringContaining("schema") },
    });
  });
});
