/**
 * Item 4 of issue 16: tenant text (thrown messages, logs, block reasons, fixture names, gate failures,
 * stored uploaders and configs) reaches the operator's terminal only escaped, in every output that shows
 * it; `--json` keeps it exact. Each command is run directly (not through runCli, whose write-side escaping
 * would hide a site that forgot), on an inline sandbox where the command lets tests choose one.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInlineExecutor } from "../../sandbox/worker/index.js";
import { parseCommandArgs } from "../../src/cli/command.js";
import { auditCommand } from "../../src/cli/commands/audit.js";
import { summaryLines } from "../../src/cli/commands/demo-summary.js";
import { inspectCommand } from "../../src/cli/commands/inspect.js";
import { createRunCommand } from "../../src/cli/commands/run.js";
import { createTestCommand } from "../../src/cli/commands/test.js";
import { versionsCommand } from "../../src/cli/commands/versions.js";
import { type Command, runCli } from "../../src/cli/index.js";
import { formatGateReport, runDeployGate } from "../../src/gate/index.js";
import { type HookExecutor, TenantId } from "../../src/protocol/index.js";
import { SqliteBundleStore } from "../../src/store/index.js";
import { fakeIO } from "../cli/fake-io.js";
import { fakeBundle } from "../store/helpers/bundles.js";
import { containsExactly, expectContained, expectNothingRaw, FORGERY } from "./terminal.js";

const ROOMY = { timeoutMs: 1_000 };
const EVENT = (command: string) => ({
  call: { id: "c1", name: "shell", args: { command } },
  batch: { index: 0, size: 1 },
});
const jsonl = (...lines: unknown[]) => `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;

/** Logs the forgery, throws it, blocks with it as reason, patches a tool result with it. */
const HOOK = `const T = ${JSON.stringify(FORGERY)};
export default {
  toolCall(event) {
    console.log(T);
    const command = String(event.call.args.command);
    if (command === "throw") throw new Error(T);
    if (command === "block") return { type: "block", reason: T };
    return undefined;
  },
  toolResult() {
    return { type: "patch", content: T };
  },
};
`;

let dir: string;
let executor: HookExecutor;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-forgery-"));
  executor = createInlineExecutor({ limits: ROOMY, quiet: true });
  await writeFile(join(dir, "index.ts"), HOOK);
  await writeFile(
    join(dir, "fixtures.jsonl"),
    jsonl(
      {
        name: FORGERY.slice(0, 200),
        point: "tool.call",
        event: EVENT("block"),
        expect: { type: "block", reason: "x" },
      },
      { point: "tool.call", event: EVENT("throw") },
      { point: "tool.call", event: EVENT("ls"), expect: { noop: true } },
    ),
  );
});
afterAll(async () => {
  await executor.close();
  await rm(dir, { recursive: true, force: true });
});

async function direct(command: Command, argv: string[], env: Record<string, string> = {}) {
  const io = fakeIO(dir, env);
  const code = await command.run(parseCommandArgs(command, argv), io);
  return { code, stdout: io.out(), stderr: io.err() };
}

const testCommand = createTestCommand({
  openExecutor: async () => createInlineExecutor({ limits: ROOMY, quiet: true }),
});

describe("isohook test", () => {
  it("shows a hostile fixture name, block reason, thrown message, log and mismatch only escaped", async () => {
    const { code, stdout } = await direct(testCommand, ["."]);
    expect(code).toBe(1);
    expectContained(stdout);
    expect(stdout).toMatch(/^FAIL line 1 tool\.call ok\\x1b\[1A.*→ block /m);
    expect(stdout).toMatch(/^ {4} line 2 tool\.call → failed threw: /m);
    expect(stdout).toMatch(/^ {7}\| ok\\x1b\[1A/m);
    expect(stdout).toMatch(/^2 passed|^1 passed, 1 failed, 1 without expect/m);
  });

  it("keeps the exact text under --json, with nothing raw on the line", async () => {
    const { stdout } = await direct(testCommand, [".", "--json"]);
    expectNothingRaw(stdout);
    // The report is the first line; a failing run adds the one JSON error line after it.
    const { results: lines } = JSON.parse(stdout.split("\n")[0] ?? "") as { results: Record<string, unknown>[] };
    expect(lines[0]).toMatchObject({ name: FORGERY.slice(0, 200), result: { type: "block", reason: FORGERY } });
    expect(lines[0]?.logs).toEqual([FORGERY]);
    expect(lines[1]).toMatchObject({ type: "failed", failure: { code: "threw" } });
    expect(containsExactly(lines[1]?.failure)).toBe(true);
  });

  it("shows a fixtures line that is not JSON only escaped in the error", async () => {
    const bad = join(dir, "bad.jsonl");
    await writeFile(bad, `{"point": "tool.call", "event": ${FORGERY.replace("\n", " ")}}\n`);
    const { code, stderr } = await (async () => {
      const io = fakeIO(dir);
      return { code: await runCli(["test", ".", "--events", bad], io), stderr: io.err() };
    })();
    expect(code).toBe(1);
    expect(stderr).toContain("bad.jsonl:1: not valid JSON");
    expectNothingRaw(stderr);
  });
});

describe("the run trace", () => {
  it("keeps each decision on the line of the tenant that made it", async () => {
    const scenario = join(dir, "scenario.json");
    await writeFile(
      scenario,
      JSON.stringify({
        tenant: "mallory",
        hook: "./index.ts",
        limits: ROOMY,
        input: "go",
        tools: [{ name: "shell", description: "runs", parameters: { type: "object" }, result: "done" }],
        model: {
          turns: [{ text: "", toolCalls: [{ name: "shell", args: { command: "block" } }] }, { text: FORGERY }],
        },
      }),
    );
    const run = createRunCommand({ openExecutor: async () => createInlineExecutor({ limits: ROOMY, quiet: true }) });
    const { code, stdout } = await direct(run, ["--scenario", scenario]);
    expect(code).toBe(0);
    expectContained(stdout);
    const lines = stdout.split("\n");
    const block = lines.find((l) => l.includes("block “ok"));
    expect(block).toMatch(/^ {4}tool\.call +tenant:mallory@v1 +block “ok\\x1b\[1A\\x1b\[2K tool\.call tenant:globex/);
    const patch = lines.find((l) => l.includes("patch content"));
    expect(patch).toMatch(/^ {4}tool\.result +tenant:mallory@v1 +patch content “ok\\x1b/);
    expect(lines.filter((l) => l.includes("tenant:globex")).every((l) => l.includes("\\x1b[2K"))).toBe(true);
    expect(stdout).toMatch(/^ {2}answer: ok\\x1b\[1A/m);
  });
});

describe("the gate report", () => {
  it("shows a thrown message in fixture and fuzz failures only escaped, as printed by upload", async () => {
    const result = await runDeployGate({
      entry: ".",
      cwd: dir,
      executor,
      tenantId: TenantId.parse("mallory"),
      fuzz: { runs: 5, seed: 1 },
      limits: ROOMY,
    });
    expect(result.type).toBe("rejected");
    const codes = result.report.reasons.map((r) => r.code);
    expect(codes).toContain("fixture_failed");
    const lines = formatGateReport(result.report);
    expectContained(lines.join("\n"));
    expect(
      lines.some((l) => l.startsWith("✗ [fixture_failed] fixtures.jsonl:2 (tool.call): threw: Error: ok\\x1b[1A")),
    ).toBe(true);
  });

  it("shows an invalid fixtures line only escaped", async () => {
    const folder = join(dir, "invalid");
    await rm(folder, { recursive: true, force: true });
    await import("node:fs/promises").then((fs) => fs.mkdir(folder));
    await writeFile(join(folder, "index.ts"), "export default { toolCall() {} };\n");
    await writeFile(join(folder, "fixtures.jsonl"), `${FORGERY.replace("\n", "")}\n`);
    const result = await runDeployGate({ entry: folder, executor, tenantId: TenantId.parse("mallory"), limits: ROOMY });
    expect(result.report.reasons.map((r) => r.code)).toEqual(["invalid_fixtures"]);
    const lines = formatGateReport(result.report);
    expectNothingRaw(lines.join("\n"));
    expect(lines.some((l) => l.includes("fixtures.jsonl:1: not valid JSON"))).toBe(true);
  });

  it("shows a stored report with raw text (an older writer's) only escaped", () => {
    const lines = formatGateReport({
      type: "rejected",
      reasons: [{ code: "fuzz_failed", message: FORGERY }],
      warnings: [FORGERY],
      fixtures: { file: FORGERY, total: 1, passed: 0 },
      fuzz: [],
      durationMs: 1,
    });
    expectNothingRaw(lines.join("\n"));
  });
});

describe("audit, inspect and versions", () => {
  const tenantId = TenantId.parse("mallory");
  let store: string;
  beforeAll(async () => {
    store = join(dir, "store.db");
    const opened = await SqliteBundleStore.open(store);
    // The store refuses control characters in an uploader but not bidi ones; config is the tenant's JSON.
    await opened.upload({
      tenantId,
      ...fakeBundle("m1"),
      by: "alice\u202eevil\u2066",
      config: { note: FORGERY },
      gateReport: {
        type: "rejected",
        reasons: [{ code: "x", message: FORGERY }],
        warnings: [],
        fixtures: null,
        fuzz: [],
        durationMs: 1,
      },
      activate: true,
    });
    await opened.close();
    // A row written by another writer (an older isohook, a hand edit) with control characters.
    const db = new Database(store);
    db.prepare("UPDATE audit SET by = ? WHERE type = 'activate'").run(FORGERY);
    db.close();
  });

  it("audit shows the uploader only escaped, --json exactly", async () => {
    const human = await direct(auditCommand, ["--store", store]);
    expectContained(human.stdout);
    expect(human.stdout).toContain("alice\\u202eevil\\u2066");
    const json = await direct(auditCommand, ["--store", store, "--json"]);
    expectNothingRaw(json.stdout);
    const entries = (JSON.parse(json.stdout) as { entries: { by: string }[] }).entries;
    expect(entries.map((e) => e.by)).toEqual(["alice\u202eevil\u2066", FORGERY]);
  });

  it("inspect shows the uploader, config and gate report only escaped, --json exactly", async () => {
    const human = await direct(inspectCommand, ["--store", store, "--tenant", "mallory"]);
    expectContained(human.stdout);
    expect(human.stdout).toMatch(/^ {2}config {7}\{"note":"ok\\u001b\[1A/m);
    const json = await direct(inspectCommand, ["--store", store, "--tenant", "mallory", "--json"]);
    expectNothingRaw(json.stdout);
    expect((JSON.parse(json.stdout) as { config: { note: string } }).config.note).toBe(FORGERY);
  });

  it("versions shows the uploader only escaped", async () => {
    const { stdout } = await direct(versionsCommand, ["--store", store, "--tenant", "mallory"]);
    expect(stdout).toContain("alice\\u202eevil\\u2066");
    expect(stdout).not.toMatch(/[\u202e\u2066]/);
  });

  it("--by with a bidi override is stored exactly and shown escaped", async () => {
    const io = fakeIO(dir);
    expect(
      await runCli(["activate", "--store", store, "--tenant", "mallory", "--version", "1", "--by", "x\u202ey"], io),
    ).toBe(0);
    const { stdout } = await direct(auditCommand, ["--store", store]);
    expect(stdout).not.toMatch(/[\u202e]/);
  });
});

describe("the demo summary", () => {
  it("shows a run's stop reason only escaped", () => {
    const lines = summaryLines(
      [
        {
          tenant: "mallory",
          worker: 0,
          version: 1,
          stopReason: "stopped",
          reason: FORGERY,
          turns: 1,
          hookCalls: 1,
          decided: [],
          failures: {},
          quarantined: false,
          medianMs: 1,
          maxMs: 1,
          maxQueuedMs: 0,
          laterQueuedMs: 0,
        },
      ],
      50,
    );
    expectContained(lines.join("\n"));
  });
});
