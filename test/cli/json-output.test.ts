import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { parseCommandArgs } from "../../src/cli/command.js";
import { createDemoCommand, DEMO_WORKERS } from "../../src/cli/commands/demo.js";
import { COMMANDS } from "../../src/cli/commands/index.js";
import { type CliIO, runCli } from "../../src/cli/index.js";
import { CLI_OUTPUT, type CliCommandName, cliOutputJsonSchema, outputLineSchema } from "../../src/cli/json-output.js";
import { SCHEMA_VERSION } from "../../src/store/index.js";
import { fakeIO } from "./fake-io.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const ROOMY = { limits: { timeoutMs: 250 }, budgets: { turnMs: 5_000, runMs: 30_000 } };

let dir: string;
let store: string;
/** Which commands were seen succeeding and failing with --json. */
const seen = new Map<string, Set<"ok" | "error">>();

/** Checks every stdout line of one --json run against the command's published schema. */
function check(command: CliCommandName, code: number, stdout: string, stderr: string) {
  expect(stderr).toBe("");
  const lines = stdout.trimEnd().split("\n");
  const schema = outputLineSchema(command);
  for (const line of lines) {
    const parsed = schema.safeParse(JSON.parse(line));
    if (!parsed.success)
      throw new Error(
        `${command} --json line does not match its schema:\n${line.slice(0, 500)}\n${parsed.error.message}`,
      );
  }
  const last = JSON.parse(lines.at(-1) ?? "null");
  const isError = typeof last === "object" && last !== null && Object.keys(last).join() === "error";
  // Every failure ends with the error object; a report that is the verdict comes on the line before it.
  expect(isError).toBe(code !== 0);
  if (lines.length > 1) expect(["run", "demo", "fuzz", "test", "replay"]).toContain(command);
  if (lines.length > 1 && ["test", "replay"].includes(command)) expect(lines).toHaveLength(2);
  const kinds = seen.get(command) ?? new Set();
  kinds.add(code === 0 ? "ok" : "error");
  seen.set(command, kinds);
  return last;
}

async function cli(command: CliCommandName, argv: string[], cwd = REPO, env: Record<string, string> = {}) {
  const io = fakeIO(cwd, { ISOHOOK_STORE: store, USER: "tester", ...env });
  const name = command === "version" ? [] : [command];
  const code = await runCli([...name, ...argv, "--json"], io);
  return check(command, code, io.out(), io.err());
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-json-"));
  store = join(dir, "store.db");
  // Only `migrate` creates a store; every admin command below finds it.
  expect(await runCli(["migrate"], fakeIO(REPO, { ISOHOOK_STORE: store }))).toBe(0);
  const scenario = JSON.parse(await readFile(join(REPO, "scenarios/acme-coding-agent.json"), "utf8"));
  delete scenario.hook;
  await writeFile(join(dir, "acme.json"), JSON.stringify({ ...scenario, ...ROOMY }));
  const push = JSON.parse(await readFile(join(REPO, "scenarios/acme-git-push.json"), "utf8"));
  await writeFile(
    join(dir, "push.json"),
    JSON.stringify({ ...push, hook: join(REPO, "hooks/ask-before-push"), ...ROOMY }),
  );
  await mkdir(join(dir, "lax"));
  await writeFile(join(dir, "lax/index.ts"), "export default { toolCall() { return undefined; } };\n");
  const event = { call: { id: "c1", name: "shell", args: {} }, batch: { index: 0, size: 1 } };
  const fixture = { point: "tool.call", event, expect: { type: "block" } };
  await writeFile(join(dir, "lax/fixtures.jsonl"), `${JSON.stringify(fixture)}\n`);
  await writeFile(
    join(dir, "fs.ts"),
    'import { readFileSync } from "node:fs";\nexport default { toolCall() { readFileSync("x"); } };\n',
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("--json output", () => {
  it("matches the published docs/cli-output.schema.json, generated from the same zod schemas", async () => {
    const published = JSON.parse(await readFile(join(REPO, "docs/cli-output.schema.json"), "utf8"));
    // On a difference: npx tsx scripts/cli-output-schema.ts
    expect(published).toEqual(JSON.parse(JSON.stringify(cliOutputJsonSchema())));
  });

  it("is one shape per command, successes and errors alike, for every command", { timeout: 120_000 }, async () => {
    expect(await cli("version", ["--version"])).toMatchObject({ isohook: expect.any(String) });
    expect(await cli("init", [join(dir, "project")])).toMatchObject({ hookPoints: ["tool.call"] });
    expect(await cli("init", [join(dir, "project")])).toMatchObject({ error: { code: "not_empty" } });
    await cli("schema", ["tool.call"]);
    expect(await cli("schema", ["toolcall"])).toMatchObject({ error: { code: "usage", usage: expect.any(String) } });

    expect(await cli("bundle", ["hooks/block-destructive-shell"])).toMatchObject({ hookPoints: ["tool.call"] });
    expect(await cli("bundle", ["fs.ts"], dir)).toMatchObject({ error: { problems: [expect.anything()] } });

    expect(await cli("test", ["hooks/block-destructive-shell", "--timeout", "250"])).toMatchObject({
      failed: 0,
      passed: 15,
    });
    const fuzzArgs = ["--runs", "5", "--no-grow", "--seed", "1", "--timeout", "250"];
    expect(await cli("fuzz", ["hooks/block-destructive-shell", ...fuzzArgs])).toMatchObject({
      type: "fuzz",
      clean: true,
    });
    expect(await cli("fuzz", ["/no/such/dir"])).toMatchObject({ error: { code: "no_hook" } });
    expect(await cli("test", ["/no/such/dir"])).toMatchObject({ error: { code: "no_hook" } });

    const up = ["--tenant", "acme", "--timeout", "250"];
    expect(await cli("upload", [...up, "hooks/block-destructive-shell", "--activate"])).toMatchObject({
      tenantId: "acme",
      version: 1,
      activated: true,
    });
    expect(await cli("upload", [...up, "hooks/coding-agent", "--root", "hooks"])).toMatchObject({
      version: 2,
      activated: false,
    });
    const rejected = await cli("upload", ["--tenant", "acme", join(dir, "lax")]);
    expect(rejected).toMatchObject({ error: { code: "gate_rejected", report: { type: "rejected" } } });

    expect(await cli("list", [])).toMatchObject({ tenants: [{ tenantId: "acme", activeVersion: 1 }] });
    expect(await cli("list", ["--tenant", "nobody"])).toMatchObject({ error: { code: "not_found" } });
    expect(await cli("versions", ["--tenant", "acme"])).toMatchObject({ versions: [{ version: 1 }, { version: 2 }] });
    expect(await cli("versions", ["--tenant", "acme", "--store", join(dir, "none.db")])).toMatchObject({
      error: { code: "missing" },
    });
    expect(await cli("activate", ["--tenant", "acme", "--version", "2"])).toEqual({
      tenantId: "acme",
      version: 2,
      previousVersion: 1,
      changed: true,
      endedRollout: null,
    });
    expect(await cli("activate", ["--tenant", "acme", "--version", "9"])).toMatchObject({ error: {} });
    expect(await cli("inspect", ["--tenant", "acme"])).toMatchObject({ version: 2, gateReport: { type: "passed" } });
    expect(await cli("inspect", ["--tenant", "acme", "--version", "99"])).toMatchObject({
      error: { code: "not_found" },
    });
    expect(await cli("run", ["--scenario", join(dir, "acme.json")])).toMatchObject({ type: "result", warnings: [] });
    expect(await cli("run", ["--scenario", join(dir, "nope.json")])).toMatchObject({ error: {} });
    const key = { ISOHOOK_CHECKPOINT_KEY: "a checkpoint key of 32 bytes...." };
    const paused = await cli("run", ["--scenario", join(dir, "push.json")], REPO, key);
    expect(paused).toMatchObject({
      stopReason: "approval",
      pending: [{ callId: "call_1_2", reason: "git push to main needs a human" }],
      checkpoint: { type: "isohook.checkpoint", version: 1 },
    });
    await writeFile(join(dir, "paused.json"), JSON.stringify(paused));
    const resume = ["--resume", join(dir, "paused.json"), "--approve", "call_1_2"];
    expect(await cli("run", resume, REPO, key)).toMatchObject({ stopReason: "completed" });
    await writeFile(join(dir, "tampered.json"), JSON.stringify({ ...paused.checkpoint, mac: "AAAA" }));
    expect(await cli("run", ["--resume", join(dir, "tampered.json"), "--approve", "call_1_2"], REPO, key)).toEqual({
      error: { code: "checkpoint_tampered", message: expect.stringMatching(/does not match its MAC/) },
    });
    expect(await cli("run", resume)).toMatchObject({ error: { code: "usage" } });
    expect(await cli("rollback", ["--tenant", "acme"])).toMatchObject({ version: 1, previousVersion: 2 });
    expect(await cli("rollback", ["--tenant", "acme"])).toMatchObject({ error: {} });
    const audit = await cli("audit", ["--tenant", "acme"]);
    expect(audit.entries.map((e: { previousVersion: number | null }) => e.previousVersion)).toEqual([
      null,
      null,
      null,
      1,
      2,
    ]);
    expect(await cli("audit", ["--limit", "0"])).toMatchObject({ error: { code: "usage" } });
    expect(await cli("quarantine", ["list", "--tenant", "acme"])).toEqual({ quarantines: [] });
    expect(await cli("quarantine", ["release", "--tenant", "acme", "--version", "1"])).toMatchObject({
      error: { code: "not_found" },
    });
    expect(await cli("rollout", ["--tenant", "acme", "--version", "2", "--percent", "50"])).toEqual({
      tenantId: "acme",
      version: 2,
      percent: 50,
      activeVersion: 1,
      previousRollout: null,
      activated: false,
      changed: true,
    });
    expect(await cli("rollout", ["--tenant", "acme", "--version", "2", "--percent", "0"])).toMatchObject({
      error: { code: "usage", message: expect.stringContaining("above 0 and at most 100") },
    });
    expect(await cli("versions", ["--tenant", "acme"])).toMatchObject({
      versions: [
        { active: true, rolloutPercent: null },
        { active: false, rolloutPercent: 50, shadow: false },
      ],
    });
    expect(await cli("shadow", ["--tenant", "acme", "--version", "2"])).toEqual({
      tenantId: "acme",
      version: 2,
      previousVersion: null,
      changed: true,
    });
    expect(await cli("list", [])).toMatchObject({
      tenants: [{ rollout: { version: 2, percent: 50 }, shadow: { version: 2 } }],
    });
    expect(await cli("shadow", ["--tenant", "acme", "--version", "1"])).toMatchObject({
      error: { code: "active_version" },
    });
    expect(await cli("shadow", ["--tenant", "acme", "--off"])).toMatchObject({ version: null, previousVersion: 2 });
    const record = (version: number, result: object | null) => ({
      point: "tool.call",
      hookId: `tenant:acme@v${version}`,
      source: "tenant",
      bundle: { version, hash: `sha256-${String(version).repeat(64)}` },
      outcome: { type: "decided", result },
      policy: "closed",
      cpuMs: 0.1,
      runMs: 0.2,
      logs: [],
    });
    const shadowed = {
      type: "hook.shadowed",
      at: "2026-12-03T08:00:00.000Z",
      tenantId: "acme",
      runId: "run-1",
      turn: 1,
      event: { call: { id: "c1", name: "shell", args: { command: "ls" } }, batch: { index: 0, size: 1 } },
      record: record(1, null),
      shadow: record(2, { type: "block", reason: "no" }),
    };
    await writeFile(
      join(dir, "events.jsonl"),
      `${JSON.stringify({ type: "turn.started", turn: 1 })}\n${JSON.stringify(shadowed)}\n`,
    );
    expect(await cli("shadow-report", ["--tenant", "acme", "--from", join(dir, "events.jsonl")])).toMatchObject({
      tenantId: "acme",
      source: "file",
      report: {
        compared: 1,
        differed: 1,
        changes: [{ from: "noop", to: "block", count: 1 }],
        versions: { baseline: [1], candidate: [2] },
        differences: [{ point: "tool.call", baseline: { key: "noop" }, candidate: { key: "block" } }],
      },
    });
    expect(await cli("shadow-report", ["--tenant", "globex", "--from", join(dir, "events.jsonl")])).toMatchObject({
      error: { code: "no_shadowed_calls" },
    });
    expect(await cli("rollback", ["--tenant", "acme"])).toMatchObject({
      version: 1,
      endedRollout: { version: 2, percent: 50 },
    });
    expect(
      (await cli("audit", ["--tenant", "acme", "--limit", "4"])).entries.map((e: { type: string }) => e.type),
    ).toEqual(["rollout", "shadow", "shadow_off", "rollback"]);
    expect(await cli("migrate", ["--store", join(dir, "migrated.db")])).toMatchObject({
      store: "sqlite",
      to: SCHEMA_VERSION,
    });
    expect(await cli("migrate", ["--store", join(dir, "acme.json")])).toMatchObject({ error: { code: "foreign" } });
    expect(await cli("demo", ["extra"])).toMatchObject({ error: { code: "usage" } });

    const called = (point: string, outcome: object, runMs: number) => ({
      type: "hook.called",
      at: "2026-12-03T08:00:00.000Z",
      tenantId: "acme",
      record: { point, outcome, cpuMs: runMs / 2, runMs, queuedMs: 1 },
    });
    const trace = [
      { type: "run.started", tenantId: "acme" },
      called("tool.call", { type: "decided", result: { type: "block", reason: "no" } }, 2),
      called("tool.call", { type: "failed", failure: { code: "timeout", message: "slow" } }, 50),
      called("tool.result", { type: "decided", result: null }, 1),
    ];
    await writeFile(join(dir, "run.jsonl"), trace.map((line) => JSON.stringify(line)).join("\n"));
    expect(await cli("stats", ["--tenant", "acme", "--from", join(dir, "run.jsonl")])).toMatchObject({
      calls: 3,
      decisions: { block: 1, noop: 1 },
      failures: { timeout: 1 },
      points: [
        { point: "tool.call", calls: 2, runMs: { p50: 2, p99: 50 } },
        { point: "tool.result", calls: 1 },
      ],
    });
    expect(await cli("stats", ["--tenant", "acme"])).toMatchObject({ from: null, calls: 0 });
    expect(await cli("stats", ["--tenant", "acme", "--from", join(dir, "none.jsonl")])).toMatchObject({
      error: { code: "unreadable" },
    });
  });

  it("streams demo events and ends with its summary", { timeout: 120_000 }, async () => {
    const demo = createDemoCommand({
      ...ROOMY,
      openExecutor: (limits, signal) =>
        createHookExecutor({ workers: DEMO_WORKERS, limits, ...(signal ? { signal } : {}) }),
    });
    const io = fakeIO(REPO);
    const code = await demo.run(parseCommandArgs(demo, ["--json"]), io);
    expect(code).toBe(0);
    expect(check("demo", code, io.out(), io.err())).toMatchObject({ type: "summary", problems: [] });
  });

  it("has one shape for the decision log's commands", { timeout: 60_000 }, async () => {
    // Sample 1: runs are sampled by a hash of their (random) id, and this test needs its one run recorded.
    const on = await cli("log", ["--tenant", "acme", "--on", "--sample", "1", "--mask", "event.call.args.password"]);
    expect(on).toMatchObject({ tenantId: "acme", settings: { sample: 1 }, previous: null, changed: true });
    expect(await cli("log", ["--tenant", "acme"])).toMatchObject({ changed: false, settings: { sample: 1 } });
    expect(await cli("log", ["--tenant", "acme", "--on", "--off"])).toMatchObject({ error: { code: "usage" } });
    // Every run, so the run below is recorded whatever its (random) run id: at 0.5 it was, half the time.
    expect(await cli("log", ["--tenant", "acme", "--on", "--sample", "1"])).toMatchObject({ settings: { sample: 1 } });
    expect(await cli("run", ["--scenario", join(dir, "acme.json")])).toMatchObject({ type: "result" });
    const listed = await cli("decisions", ["--tenant", "acme", "--export", join(dir, "acme.jsonl")]);
    expect(listed).toMatchObject({ tenantId: "acme", exported: { lines: listed.decisions.length, skipped: 0 } });
    expect(listed.decisions.length).toBeGreaterThan(0);
    const replayed = await cli("replay", ["--tenant", "acme", "--version", "2", "--timeout", "250"]);
    expect(replayed).toMatchObject({ source: "log", report: { compared: listed.decisions.length } });
    expect(
      await cli("replay", ["--tenant", "acme", "--version", "2", "--from", join(dir, "acme.jsonl"), "--fail-on-diff"]),
    ).toMatchObject({ error: { code: "decisions_changed" } });
    expect(await cli("replay", ["--tenant", "acme", "--version", "99"])).toMatchObject({
      error: { code: "not_found" },
    });
    expect(await cli("decisions", ["--tenant", "acme", "--point", "tool.cal"])).toMatchObject({
      error: { code: "usage" },
    });
  });

  it("has one shape for the MCP gateway's listening line and its errors", { timeout: 60_000 }, async () => {
    await writeFile(join(dir, "tokens"), "acme-token-0123456789 acme\n");
    const controller = new AbortController();
    const recorded = fakeIO(REPO, {});
    const io: CliIO = {
      ...recorded,
      signal: controller.signal,
      stdout: (text) => {
        recorded.stdout(text);
        controller.abort();
      },
    };
    const argv = ["--listen", "127.0.0.1:0", "--tokens", join(dir, "tokens"), "--upstream", "e=node e.js"];
    const code = await runCli(["mcp", ...argv, "--hook", join(dir, "lax"), "--json"], io);
    expect(check("mcp", code, recorded.out(), recorded.err())).toMatchObject({
      type: "listening",
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/),
    });
    expect(await cli("mcp", ["--tenant", "acme"])).toMatchObject({ error: { code: "usage" } });
  });

  it("covers every command, each succeeding and failing", () => {
    for (const name of Object.keys(CLI_OUTPUT)) {
      const kinds = [...(seen.get(name) ?? [])].sort();
      expect({ name, kinds }).toEqual({ name, kinds: name === "version" ? ["ok"] : ["error", "ok"] });
    }
    const names = [...COMMANDS.map((c) => c.name), "version"].sort();
    expect(Object.keys(CLI_OUTPUT).sort()).toEqual(names);
  });
});
