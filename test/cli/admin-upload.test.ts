import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/index.js";
import { GOOD_INDEX, toolCallFixture, writeHook } from "../gate/hook-modules.js";
import { fileDigest } from "../store/helpers/files.js";

let dir: string;
let store: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "isohook-upload-"));
  store = join(dir, "store.db");
  expect((await cli(["migrate"])).code).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(argv: string[], at = store) {
  let stdout = "";
  let stderr = "";
  const code = await runCli([...argv, "--store", at], {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env: { USER: "alice" },
    cwd: dir,
  });
  return { code, stdout, stderr };
}

describe("isohook upload", () => {
  it("refuses a store that does not exist, naming it and how to create it, and creates nothing", async () => {
    writeHook(dir, "typo-hook", GOOD_INDEX);
    const typo = join(dir, "typo.db");
    for (const json of [false, true]) {
      const { code, stdout, stderr } = await cli(
        ["upload", "--tenant", "acme", "typo-hook", ...(json ? ["--json"] : [])],
        typo,
      );
      expect(code).toBe(1);
      if (json) expect(JSON.parse(stdout)).toMatchObject({ error: { code: "missing" } });
      else expect(stderr).toContain(`No store at ${typo}. Create it with \`isohook migrate --store ${typo}\``);
      expect(existsSync(typo)).toBe(false);
    }
  });

  it("gates, stores and activates a hook; versions, rollback and audit follow", async () => {
    writeHook(dir, "policy", GOOD_INDEX);
    writeFileSync(join(dir, "config.json"), '{"mode": "strict"}');
    const first = await cli([
      "upload",
      "--tenant",
      "acme",
      "policy",
      "--activate",
      "--config",
      "config.json",
      "--seed",
      "1",
    ]);
    expect([first.code, first.stderr]).toEqual([0, ""]);
    expect(first.stdout).toMatch(/^Deploy gate passed in/);
    expect(first.stdout).toContain("fixtures: 2/2 passed");
    expect(first.stdout).toContain("fuzz tool.call:");
    expect(first.stdout).toMatch(/acme: stored version 1 \([0-9a-f]{12}, .*hook points: tool\.call\), now active\./);

    writeHook(
      dir,
      "policy2",
      GOOD_INDEX.replace("destructive shell command", "destructive shell command (v2)"),
      [
        toolCallFixture("shell", { command: "rm -rf /" }, { type: "block", reason: "destructive shell command (v2)" }),
      ].join("\n"),
    );
    const second = await cli(["upload", "--tenant", "acme", "policy2/index.ts", "--json"]);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ tenantId: "acme", version: 2, activated: false });

    expect((await cli(["activate", "--tenant", "acme", "--version", "2"])).code).toBe(0);
    const inspected = await cli(["inspect", "--tenant", "acme"]);
    expect(inspected.stdout).toMatch(/config\s+\{"mode":"strict"\}/);
    expect(inspected.stdout).toMatch(/gate\s+passed in/);
    expect((await cli(["rollback", "--tenant", "acme"])).stdout).toBe("acme: rolled back to version 1 (from v2).\n");
    const audit = await cli(["audit", "--tenant", "acme", "--json"]);
    const types = (JSON.parse(audit.stdout) as { entries: { type: string; version: number }[] }).entries.map((e) => [
      e.type,
      e.version,
    ]);
    expect(types).toEqual([
      ["upload", 1],
      ["activate", 1],
      ["upload", 2],
      ["activate", 2],
      ["rollback", 1],
    ]);
  });

  it("rejects a hook the gate refuses, lists every reason and stores nothing", async () => {
    const before = fileDigest(store);
    const index = "export default { toolCal() {}, toolCall(event) { return event.call.args.command.trim(); } };\n";
    writeHook(dir, "broken", index, toolCallFixture("shell", { command: "rm -rf /" }, { type: "block" }));
    const result = await cli(["upload", "--tenant", "acme", "broken", "--activate"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("the deploy gate rejected broken (3 reasons); nothing was stored.");
    expect(result.stderr).toContain("[unknown_exports]");
    expect(result.stderr).toContain("[fixture_failed]");
    expect(result.stderr).toContain("[fuzz_failed]");
    expect(fileDigest(store)).toBe(before);
    const json = await cli(["upload", "--tenant", "acme", "broken", "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: "gate_rejected", report: { type: "rejected" } } });
  });

  it("runs the gate under --timeout and --memory", async () => {
    const slow = `export default { toolCall(event) {
  if (event.call.args.command !== "slow") return undefined;
  // Work, not a wait: timeouts are CPU time (~0.3 s of it here, past 50 ms, well within 2 s).
  let x = 0;
  for (let i = 0; i < 5e7; i++) x = (x * 31 + i) | 0;
  return x === 0.5 ? { type: "block", reason: "never" } : undefined;
} };
`;
    writeHook(dir, "slow", slow, toolCallFixture("shell", { command: "slow" }, { noop: true }));
    const strict = await cli(["upload", "--tenant", "slowpoke", "slow", "--seed", "1"]);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain("[fixture_failed]");
    expect(strict.stderr).toContain("timeout");
    const roomy = await cli(["upload", "--tenant", "slowpoke", "slow", "--timeout", "2000", "--memory", "64"]);
    expect([roomy.code, roomy.stderr]).toEqual([0, ""]);
    expect((await cli(["upload", "--tenant", "slowpoke", "slow", "--memory", "4"])).code).toBe(2);
  });

  it("explains a missing entry, config file or malformed config", async () => {
    const missing = await cli(["upload", "--tenant", "acme", "nowhere"]);
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining("There is no hook at nowhere")]);
    writeFileSync(join(dir, "bad.json"), "{mode: strict}");
    const bad = await cli(["upload", "--tenant", "acme", "policy", "--config", "bad.json"]);
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining("is not valid JSON")]);
    const absent = await cli(["upload", "--tenant", "acme", "policy", "--config", "absent.json"]);
    expect([absent.code, absent.stderr]).toEqual([
      1,
      expect.stringContaining("Cannot read the config file absent.json"),
    ]);
  });

  it.each([
    [["upload", "--tenant", "acme"]],
    [["upload", "--tenant", "acme", "a", "b"]],
    [["upload", "policy"]],
    [["upload", "--tenant", "../acme", "policy"]],
    [["upload", "--tenant", "acme", "policy", "--skip-gate"]],
  ])("refuses %j as a usage error", async (argv) => {
    const result = await cli(argv);
    expect(result.code).toBe(2);
  });
});
