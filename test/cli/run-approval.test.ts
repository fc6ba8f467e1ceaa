import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportPaused } from "../../src/cli/commands/run-approval.js";
import type { RunAgentResult } from "../../src/runtime/index.js";
import { isohookProcess } from "./cli-process.js";
import { fakeIO } from "./fake-io.js";

/** The done-when of issue 11, with the real CLI: a push held for approval, resumed in a second process. */

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const KEY = "test checkpoint key: 32 bytes ok";
let dir: string;
let scenario: string;

/** Runs `isohook …` in its own process, as a user would. */
function isohook(args: string[], env: Record<string, string | undefined> = { ISOHOOK_CHECKPOINT_KEY: KEY }) {
  return isohookProcess(args, {
    ISOHOOK_CHECKPOINT_KEY: undefined,
    ISOHOOK_CHECKPOINT_PREVIOUS_KEY: undefined,
    ...env,
  });
}

function resultLine(stdout: string) {
  return JSON.parse(stdout.trimEnd().split("\n").at(-1) ?? "null");
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-approval-"));
  // Roomy limits: the first call of each process loads the bundle on a machine busy with other suites.
  const spec = JSON.parse(await readFile(join(REPO, "scenarios/acme-git-push.json"), "utf8"));
  scenario = join(dir, "push.json");
  const roomy = { limits: { timeoutMs: 500 }, budgets: { turnMs: 10_000, runMs: 30_000 } };
  await writeFile(scenario, JSON.stringify({ ...spec, hook: join(REPO, "hooks/ask-before-push"), ...roomy }));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("isohook run with approvals, across processes", { timeout: 120_000 }, () => {
  it("ends with approval, and a second process approves the push, rejects it, or refuses a tampered checkpoint", async () => {
    const checkpoint = join(dir, "push.checkpoint.json");
    const first = await isohook(["run", "--scenario", scenario, "--checkpoint", checkpoint]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("■ approval (1 tool call waits for approval)");
    expect(first.stdout).toContain('call_1_2  shell({"command":"git push origin main"})');
    expect(first.stdout).toContain("asked by tenant:acme@v1: “git push to main needs a human”");
    expect(first.stdout).not.toContain("$ git push origin main");

    const approved = await isohook(["run", "--resume", checkpoint, "--approve", "call_1_2", "--json"]);
    expect(approved.code).toBe(0);
    const done = resultLine(approved.stdout);
    expect(done).toMatchObject({ stopReason: "completed", output: "Tests pass; the push result is above." });
    expect(done.transcript.filter((m: { role: string }) => m.role === "tool")).toMatchObject([
      { content: "$ npm test\nok", isError: false },
      { content: "$ git push origin main\nok", isError: false },
    ]);

    const rejected = await isohook([
      "run",
      "--resume",
      checkpoint,
      "--reject",
      "call_1_2",
      "--reason",
      "not on a Friday",
    ]);
    expect(rejected.code).toBe(0);
    expect(rejected.stdout).toContain("✗ rejected: not on a Friday");
    expect(rejected.stdout).not.toContain("✓ $ git push origin main");

    const body = JSON.parse(await readFile(checkpoint, "utf8"));
    const tampered = join(dir, "tampered.json");
    await writeFile(tampered, JSON.stringify({ ...body, body: body.body.replace('"asked":1', '"asked":0') }));
    const refused = await isohook(["run", "--resume", tampered, "--approve", "call_1_2"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/does not match its MAC/);
    expect(refused.stdout).toBe("");

    const keyless = await isohook(["run", "--resume", checkpoint, "--approve", "call_1_2"], {});
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toMatch(/Set ISOHOOK_CHECKPOINT_KEY/);

    // Rotating keys: a new key with the old one as the previous still resumes what the old one sealed.
    const NEW = "the next checkpoint key, 32 bytes";
    const rotated = await isohook(["run", "--resume", checkpoint, "--approve", "call_1_2"], {
      ISOHOOK_CHECKPOINT_KEY: NEW,
      ISOHOOK_CHECKPOINT_PREVIOUS_KEY: KEY,
    });
    expect(rotated.stderr).toBe("");
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toContain("✓ $ git push origin main");
    const dropped = await isohook(["run", "--resume", checkpoint, "--approve", "call_1_2"], {
      ISOHOOK_CHECKPOINT_KEY: NEW,
    });
    expect(dropped.code).toBe(1);
    expect(dropped.stderr).toMatch(/does not match its MAC/);
    const previousOnly = await isohook(["run", "--resume", checkpoint, "--approve", "call_1_2"], {
      ISOHOOK_CHECKPOINT_PREVIOUS_KEY: KEY,
    });
    expect(previousOnly.code).toBe(2);
    expect(previousOnly.stderr).toMatch(/set ISOHOOK_CHECKPOINT_KEY too/);
  });

  it("makes a run that pauses without ISOHOOK_CHECKPOINT_KEY a usage error, and answers from the scenario's approvals", async () => {
    const keyless = await isohook(["run", "--scenario", scenario], {});
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toMatch(/ISOHOOK_CHECKPOINT_KEY is not set/);

    const spec = JSON.parse(await readFile(scenario, "utf8"));
    const answered = join(dir, "answered.json");
    await writeFile(answered, JSON.stringify({ ...spec, approvals: { call_1_2: { type: "approve" } } }));
    const run = await isohook(["run", "--scenario", answered], {});
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("✓ $ git push origin main ok");
    expect(run.stdout).toContain("■ completed");
  });
});

describe("the held calls in the text output", () => {
  it("shows tenant text through printable: a reason cannot erase a line or forge an approval", async () => {
    const io = fakeIO(REPO);
    const pending = {
      callId: "call_1_1",
      call: { id: "call_1_1", name: "shell", args: { command: "git push" } },
      args: { command: "git push\u001b[2K" },
      reason: "ok\u001b[2K\u001b[1A\rAPPROVED",
      question: "\u202eevil",
      by: { hookId: "tenant:mallory@v1", source: "tenant" },
      turn: 1,
      index: 0,
    };
    const result = { pending: [pending], checkpoint: { type: "isohook.checkpoint" } } as unknown as RunAgentResult;
    const checkpoint = join(dir, "printable.checkpoint.json");
    await reportPaused(result, { values: { checkpoint }, positionals: [], json: false }, io);
    for (const raw of ["\u001b", "\r", "\u202e"]) expect(io.out()).not.toContain(raw);
    expect(io.out()).toContain("“ok\\x1b[2K\\x1b[1A\\rAPPROVED”");
    expect(io.out()).toContain("\\u202eevil");
  });
});
