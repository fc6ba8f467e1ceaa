import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/index.js";
import type { TenantId } from "../../src/protocol/index.js";
import { SqliteBundleStore } from "../../src/store/index.js";
import { fakeBundle } from "../store/helpers/bundles.js";

let dir: string;
const acme = "acme" as TenantId;
const SETTINGS = { failures: 3, windowMs: 60_000, cooldownMs: 30_000, maxCooldownMs: 600_000, forgetAfterMs: 600_000 };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "isohook-quarantine-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function cli(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env: { USER: "alice", ISOHOOK_STORE: join(dir, "store.db") },
    cwd: dir,
  });
  return { code, stdout, stderr };
}

/** acme v1 quarantined by the failures of two hosts (one whose name would reverse the terminal's text). */
async function seed(): Promise<string> {
  const store = await SqliteBundleStore.open(join(dir, "store.db"));
  const bundle = fakeBundle("spinner");
  await store.upload({ tenantId: acme, ...bundle, by: "ops", activate: true });
  const at = Date.now();
  const report = (host: string, n: number) =>
    store.quarantine.report(
      {
        tenantId: acme,
        bundleHash: bundle.manifest.hash,
        host,
        failures: Array(n).fill({ at, code: "timeout", weight: 1 }),
      },
      SETTINGS,
    );
  expect(await report("web-1", 2)).toBeUndefined();
  expect(await report("web-2\u202e", 1)).toMatchObject({ strike: 1, failures: 3 });
  await store.close();
  return bundle.manifest.hash;
}

describe("isohook quarantine", () => {
  it("lists the bundles in quarantine with their strike, codes, times and hosts", async () => {
    const hash = await seed();
    const text = await cli(["quarantine", "list"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^TENANT\s+BUNDLE\s+VERSIONS\s+STRIKE\s+FAILURES\s+CODES\s+SINCE\s+UNTIL\s+HOSTS\n/);
    expect(text.stdout).toContain(`acme    ${hash.slice(7, 19)}  v1        1       3         timeout`);
    // A host name is shown through printable: no escape sequence reaches the terminal.
    expect(text.stdout).not.toContain("\u202e");
    expect(text.stdout).toMatch(/web-1,web-2\\u202e|web-2\\u202e,web-1/);
    const json = JSON.parse((await cli(["quarantine", "list", "--tenant", "acme", "--json"])).stdout);
    expect(json.quarantines).toHaveLength(1);
    expect(json.quarantines[0]).toMatchObject({ tenantId: "acme", hash, versions: [1], strike: 1, codes: ["timeout"] });
    expect(json.quarantines[0].hosts.sort()).toEqual(["web-1", "web-2\u202e"]);
    expect(Date.parse(json.quarantines[0].until) - Date.parse(json.quarantines[0].since)).toBe(30_000);
    expect((await cli(["quarantine", "list", "--tenant", "globex"])).stdout).toBe("No bundle is in quarantine.\n");
  });

  it("refuses a host name with control characters in a report", async () => {
    const store = await SqliteBundleStore.open(join(dir, "store.db"));
    const { manifest } = fakeBundle("x");
    const failures = [{ at: Date.now(), code: "timeout" as const, weight: 1 }];
    await expect(
      store.quarantine.report({ tenantId: acme, bundleHash: manifest.hash, host: "web\u001b[2J", failures }, SETTINGS),
    ).rejects.toMatchObject({ code: "invalid_input" });
    await store.close();
  });

  it("releases one, audited, and refuses a second release or a bad call", async () => {
    await seed();
    const released = await cli(["quarantine", "release", "--tenant", "acme", "--version", "1", "--by", "bob"]);
    expect(released.stderr).toBe("");
    expect(released.stdout).toMatch(/^acme: the quarantine of v1 \([0-9a-f]{12}, strike 1\) is lifted/);
    expect((await cli(["quarantine", "list"])).stdout).toBe("No bundle is in quarantine.\n");
    const all = await cli(["quarantine", "list", "--all"]);
    expect(all.stdout).toContain("released by bob");
    const audit = await cli(["audit", "--tenant", "acme", "--json"]);
    expect(JSON.parse(audit.stdout).entries.at(-1)).toMatchObject({ type: "release", version: 1, by: "bob" });

    const again = await cli(["quarantine", "release", "--tenant", "acme", "--version", "1"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is not in quarantine: nothing to release/);
    expect((await cli(["quarantine", "release", "--tenant", "acme", "--version", "7"])).code).toBe(1);
    expect((await cli(["quarantine", "release", "--tenant", "acme"])).code).toBe(2);
    expect((await cli(["quarantine", "lift"])).code).toBe(2);
    expect((await cli(["quarantine", "list", "--version", "1"])).code).toBe(2);
  });
});
