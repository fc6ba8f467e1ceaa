import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import { parseCommandArgs } from "../../src/cli/command.js";
import { createDemoCommand, DEMO_WORKERS } from "../../src/cli/commands/demo.js";
import { runCli } from "../../src/cli/index.js";
import { TenantId } from "../../src/protocol/index.js";
import { SqliteBundleStore } from "../../src/store/index.js";
import { fakeIO } from "./fake-io.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

async function cli(argv: string[], env: Record<string, string> = {}) {
  const io = fakeIO(REPO, env);
  const code = await runCli(argv, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

/**
 * Hook calls are timed in wall-clock time: on a test machine busy with other suites a 50 ms call can run
 * past its timeout. The tests give well-behaved hooks room; the decisions under test do not change.
 */
const ROOMY = { limits: { timeoutMs: 250 }, budgets: { turnMs: 5_000, runMs: 30_000 } };

/** A copy of a scenario from scenarios/ with roomy limits (its hook made absolute), and the copy's path. */
async function roomy(name: string, change: (scenario: Record<string, unknown>) => void = () => {}) {
  const scenario = JSON.parse(await readFile(join(REPO, "scenarios", name), "utf8")) as Record<string, unknown>;
  if (typeof scenario.hook === "string") scenario.hook = join(REPO, "scenarios", scenario.hook);
  if (typeof scenario.root === "string") scenario.root = join(REPO, "scenarios", scenario.root);
  Object.assign(scenario, ROOMY);
  change(scenario);
  const file = join(dir, name);
  await writeFile(file, JSON.stringify(scenario));
  return file;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-run-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("isohook run", () => {
  it("prints what each hook decided, on which bundle version, and how the run ended", async () => {
    const { code, stdout, stderr } = await cli(["run", "--scenario", await roomy("acme-coding-agent.json")]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(/^▶ acme · run_[0-9a-f-]+ · bundle v1 \(sha256-/);
    expect(stdout).toMatch(/tool\.call +tenant:acme@v1 +block “destructive shell command: rm -rf \/” · [\d.]+ ms/);
    expect(stdout).toMatch(/rewrite args → \{"command":"ls","cwd":"\/workspace"\}/);
    expect(stdout).toMatch(/tool\.result +tenant:acme@v1 +patch content “OPENAI_API_KEY=\[REDACTED\]/);
    expect(stdout).toContain("■ completed · 3 turns");
    expect(stdout).not.toMatch(/sk-proj-/);
  });

  it("prints one JSON event per line with --json, ending with the transcript and stop reason", async () => {
    const { code, stdout } = await cli(["run", "--scenario", await roomy("globex-data-agent.json"), "--json"]);
    expect(code).toBe(0);
    const lines = stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string });
    expect(lines[0]).toMatchObject({ type: "run.started", tenantId: "globex", bundle: { version: 1 } });
    const result = lines.at(-1) as {
      type: string;
      stopReason: string;
      reason: string;
      transcript: { content: string }[];
    };
    expect(result).toMatchObject({ type: "result", stopReason: "completed", reason: "turn budget of 3 turns spent" });
    expect(result.transcript.map((m) => m.content)).toContain(
      "rows for: SELECT * FROM orders WHERE month = '2026-12' LIMIT 100",
    );
    expect(lines.some((l) => l.type === "hooks.decided")).toBe(true);
  });

  it("runs the store's active bundle for a scenario without a hook", async () => {
    const storePath = join(dir, "store.db");
    const executor = await createHookExecutor({ workers: 1, spareWorker: false });
    const store = await SqliteBundleStore.open(storePath);
    try {
      const built = await buildBundle(join(REPO, "hooks/block-destructive-shell"), { executor });
      await store.upload({ tenantId: TenantId.parse("acme"), ...built, by: "test", activate: true });
      await store.upload({ tenantId: TenantId.parse("acme"), ...built, by: "test", activate: true });
    } finally {
      await store.close();
      await executor.close();
    }
    const file = await roomy("acme-coding-agent.json", (scenario) => {
      delete scenario.hook;
    });
    const { code, stdout } = await cli(["run", "--scenario", file], { ISOHOOK_STORE: storePath });
    expect(code).toBe(0);
    expect(stdout).toContain("bundle v2");
    expect(stdout).toMatch(/tenant:acme@v2 +block/);
    expect(stdout).toContain("sk-proj-");
  });

  it("says what is wrong with a scenario, naming the field", async () => {
    const file = join(dir, "bad.json");
    await writeFile(file, JSON.stringify({ tenant: "Acme Corp", input: "x", model: { turns: [] } }));
    const bad = await cli(["run", "--scenario", file]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/bad\.json is not a valid scenario/);
    expect(bad.stderr).toMatch(/`tenant`: Expected a tenant id/);
    expect(bad.stderr).toMatch(/`model\.turns`/);

    const missing = await cli(["run", "--scenario", "scenarios/nope.json"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/nope\.json: no such file/);

    expect((await cli(["run"])).code).toBe(2);

    const acme = await roomy("acme-coding-agent.json");
    const withEscape = await cli(["run", "--scenario", acme, "--run-id", "run\u001b[2J"]);
    expect(withEscape.code).toBe(2);
    expect(withEscape.stderr).toContain("Expected --run-id to be 1–128 characters, none of them a control character");
    expect(withEscape.stderr).toContain('"run\\u001b[2J"');
  });

  it("explains how to get a bundle when the scenario has no hook and there is no store", async () => {
    const file = join(dir, "no-hook.json");
    await writeFile(file, JSON.stringify({ tenant: "acme", input: "x", model: { turns: [{ text: "hi" }] } }));
    const { code, stderr } = await cli(["run", "--scenario", file, "--store", join(dir, "missing.db")]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/no store at .*missing\.db.*isohook upload/);
  });
});

describe("isohook demo", () => {
  it("is registered with its help", async () => {
    const { code, stdout } = await cli(["demo", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: isohook demo/);
  });

  it("runs four tenants and shows a block, a redaction, a rewrite, a turn budget, a contained runaway and an ask", async () => {
    const command = createDemoCommand({
      openExecutor: (limits) => createHookExecutor({ workers: DEMO_WORKERS, limits }),
      ...ROOMY,
    });
    const io = fakeIO(REPO);
    const code = await command.run(parseCommandArgs(command, []), io);
    const stdout = io.out();
    expect(io.err()).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(/acme v2 from hooks\/coding-agent \(active/);
    expect(stdout).toMatch(/tenant:acme@v2 +block “destructive shell command/);
    expect(stdout).toMatch(/patch content “OPENAI_API_KEY=\[REDACTED\]/);
    expect(stdout).toMatch(
      /tenant:globex@v1 +rewrite args → \{"query":"SELECT \* FROM orders WHERE month = '2026-12' LIMIT 100"\}/,
    );
    expect(stdout).toMatch(/tenant:globex@v1 +end “turn budget of 3 turns spent”/);
    expect(stdout).toMatch(/tenant:mallory@v1 +FAILED timeout/);
    expect(stdout).toMatch(/⚠ quarantine: mallory bundle sha256-/);
    expect(stdout).toMatch(/FAILED quarantined/);
    expect(stdout).toMatch(/Contained: mallory's hook ran out of time \d+ times \(the 250 ms per-call timeout/);
    expect(stdout).toMatch(
      /acme shares worker \d with it: its hook calls waited up to \d+ ms, \d+ ms after its first call \(globex, with no spinner beside it: \d+ ms and \d+ ms\);\n {2}held calls moved to another worker, the spins to the long-call worker; the wait is not charged to its\n {2}hook-time budget/,
    );
    expect(stdout).toMatch(/tenant:initech@v1 +ask “git push to main needs a human”/);
    expect(stdout).toContain("✗ rejected: release freeze until Monday");
    expect(stdout).not.toMatch(/■ approval/);
    expect(stdout).not.toMatch(/sk-proj-/);
  });
});
