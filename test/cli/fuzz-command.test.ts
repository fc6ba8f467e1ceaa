import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileHook } from "../../src/bundler/index.js";
import { runCli } from "../../src/cli/index.js";
import { type HookPoint, SDK_VERSION, TenantId } from "../../src/protocol/index.js";
import { SqliteBundleStore } from "../../src/store/index.js";
import { toolCallFixture, writeHook } from "../gate/hook-modules.js";
import { fakeIO } from "./fake-io.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const QUADRATIC = "test/fixtures/fuzz/fork-bomb-quadratic";
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "isohook-fuzz-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(argv: string[]) {
  const io = fakeIO(ROOT);
  const code = await runCli(["fuzz", ...argv], io);
  return { code, stdout: io.out(), stderr: io.err() };
}

const jsonLines = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** Stores a hook's bundle as the tenant's active version, without the gate (runaway would not pass it). */
async function storeHook(store: SqliteBundleStore, tenant: string, entry: string, point: HookPoint): Promise<void> {
  const built = await compileHook(entry, { cwd: ROOT });
  const hookPoints: HookPoint[] = [point];
  const manifest = { hash: built.hash, bytes: built.bytes, hookPoints, sdkVersion: SDK_VERSION, entry: built.entry };
  await store.upload({ tenantId: TenantId.parse(tenant), code: built.code, manifest, by: "ops", activate: true });
}

describe("isohook fuzz", () => {
  it("reports the runaway hook's timeouts with the seed that replays them", async () => {
    const { code, stdout } = await cli(["hooks/runaway", "--seed", "42", "--runs", "60", "--time", "60", "--no-grow"]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/✗ timeout: The hook ran past its 50 ms timeout/);
    expect(stdout).toContain("replay: isohook fuzz hooks/runaway --points tool.call --runs 60 --seed 42");
    expect(stdout).toMatch(/p99 at \d+(\.\d)? % of 50 ms/);

    const json = await cli(["hooks/runaway", "--seed", "42", "--runs", "60", "--time", "60", "--no-grow", "--json"]);
    expect(json.code).toBe(1);
    const [report] = jsonLines(json.stdout) as [
      { clean: boolean; seed: number; points: { point: string; failures: { code: string; event: unknown }[] }[] },
    ];
    expect(report.clean).toBe(false);
    expect(report.seed).toBe(42);
    const failure = report.points[0]?.failures.find((f) => f.code === "timeout");
    // The shrunk event still mentions "spin", which is what makes the hook spin.
    expect(JSON.stringify(failure?.event)).toContain("spin");
  }, 180_000);

  it("flags the quadratic fork-bomb fixture with its slope and projected size", async () => {
    const { code, stdout } = await cli([QUADRATIC, "--seed", "1", "--runs", "50", "--time", "120", "--json"]);
    expect(code).toBe(1);
    const [report] = jsonLines(stdout) as [
      { points: { growth: { flags: { slope: number; projectedSize: number; input: { path: string } }[] } }[] },
    ];
    const flags = report.points[0]?.growth.flags ?? [];
    expect(flags.map((f) => f.input.path)).toContain("call.args.command");
    for (const flag of flags) {
      expect(flag.slope).toBeGreaterThanOrEqual(1.5);
      expect(flag.projectedSize).toBeGreaterThan(0);
    }
  }, 240_000);

  it("sweeps every tenant's active bundle in a store, one line each, and fails when any does", async () => {
    const path = join(dir, "three.db");
    expect(await runCli(["migrate", "--store", path], fakeIO(ROOT))).toBe(0);
    // Through the deploy gate, which keeps the fixture events in its report for later fuzzing.
    for (const [tenant, entry] of [
      ["acme", "hooks/redact-secrets"],
      ["quadratic", QUADRATIC],
    ] as const) {
      const io = fakeIO(ROOT, { USER: "ops" });
      const uploaded = await runCli(["upload", "--tenant", tenant, entry, "--activate", "--store", path], io);
      expect([uploaded, io.err()]).toEqual([0, ""]);
    }
    // runaway would not pass the gate: stored directly.
    const store = await SqliteBundleStore.open(path);
    await storeHook(store, "runaway", "hooks/runaway", "tool.call");
    await store.close();

    const sweep = (...extra: string[]) =>
      cli(["--all", "--store", path, "--seed", "3", "--runs", "40", "--time", "40", ...extra]);
    const { code, stdout, stderr } = await sweep();
    expect([code, stderr]).toEqual([1, ""]);
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines.find((l) => l.startsWith("runaway "))).toMatch(/FAILED.*tool\.call timeout \(seed 3\)/);
    expect(lines.find((l) => l.startsWith("quadratic "))).toMatch(/FAILED.*call\.args\.command slope \d\.\d\d/);
    expect(lines.find((l) => l.startsWith("acme "))).toBeDefined();

    const json = await sweep("--no-grow", "--points", "tool.call", "--json");
    const unknown = await cli(["--tenant", "nobody", "--store", path]);
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining("No tenant `nobody`")]);
    const jsonOut = jsonLines(json.stdout);
    // A failed sweep ends with the error object, after every bundle's report.
    expect(jsonOut.at(-1)).toEqual({
      error: { code: "fuzz_findings", message: "A fuzzed bundle failed: see its report" },
    });
    const reports = jsonOut.slice(0, -1) as { type: string; tenantId: string; clean: boolean }[];
    expect(reports.map((r) => [r.tenantId, r.type]).sort()).toEqual([
      ["acme", "skipped"], // exports tool.result only
      ["quadratic", "fuzz"],
      ["runaway", "fuzz"],
    ]);
    expect(reports.find((r) => r.tenantId === "runaway")?.clean).toBe(false);
  }, 300_000);

  it("prints a hook's own text (its error messages) without terminal control characters", async () => {
    const entry = writeHook(
      dir,
      "ansi",
      `export default { toolCall() { throw new Error("\\u001b[2J\\u001b]0;owned\\u0007 gone"); } };\n`,
      toolCallFixture("shell", { command: "ls" }, { noop: true }),
    );
    const { code, stdout, stderr } = await cli([entry, "--seed", "1", "--runs", "5", "--no-grow"]);
    expect([code, stderr]).toEqual([1, ""]);
    expect(stdout).toContain("✗ threw:");
    expect(stdout).toContain("\\x1b[2J");
    const controls = [...stdout].filter((c) => c !== "\n" && (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f));
    expect(controls).toEqual([]);

    const json = await cli([entry, "--seed", "1", "--runs", "5", "--no-grow", "--json"]);
    // --json carries the text exact.
    expect(json.stdout).toContain(String.raw`\u001b[2J\u001b]0;owned\u0007 gone`);
  }, 60_000);

  it("keeps a line break in a fixture key's growth path on its line, in the report and the sweep", async () => {
    const entry = writeHook(
      dir,
      "newline-key",
      `export default { toolCall(e) { for (const v of Object.values(e.call.args)) if (String(v).length > 3000) throw new Error("long"); } };\n`,
      toolCallFixture("shell", { "x\nall tenants clean\n": "ls" }, { noop: true }),
    );
    const { code, stdout } = await cli([entry, "--seed", "1", "--runs", "5", "--time", "60"]);
    expect(code).toBe(1);
    expect(stdout).toContain("x\\nall tenants clean\\n");
    expect(stdout.split("\n").filter((l) => l.startsWith("all tenants clean"))).toEqual([]);
  }, 120_000);

  it.each([
    [[], /Fuzz one thing/],
    [["hooks/runaway", "--all"], /Fuzz one thing/],
    [["hooks/runaway", "--points", "tool.cal"], /Unknown hook point `tool.cal`/],
    [["hooks/runaway", "--points", "tool.result", "--no-grow"], /does not export tool.result/],
    [["hooks/runaway", "--grow", "--no-grow"], /--grow or --no-grow/],
    [["hooks/runaway", "--runs", "0"], /--runs to be an integer/],
    [["--version", "2", "--all"], /--version needs --tenant/],
  ])(
    "exits 2 on a wrong invocation: %j",
    async (argv, message) => {
      const { code, stderr } = await cli(argv);
      expect(code).toBe(2);
      expect(stderr).toMatch(message);
    },
    60_000,
  );
});
