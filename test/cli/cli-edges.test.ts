import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/index.js";
import { fakeIO } from "./fake-io.js";

/** What a user loses, or does not, at the CLI's edges: a closed pipe, a paused run, a bad key. */

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const TSX = join(REPO, "node_modules/tsx/dist/loader.mjs");
const MAIN = join(REPO, "src/cli/main.ts");
const KEY = "test checkpoint key: 32 bytes ok";
let dir: string;
let store: string;
let scenario: string;

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `isohook …` in its own process in `dir`. With `closeAfterFirstChunk`, the reader goes away after the
 * first output, as `| head -1` does.
 */
function isohook(args: string[], env: Record<string, string | undefined>, closeAfterFirstChunk = false) {
  return new Promise<Exit>((resolve, reject) => {
    const child = spawn(process.execPath, ["--no-node-snapshot", "--import", TSX, MAIN, ...args], {
      cwd: dir,
      env: { ...process.env, ISOHOOK_CHECKPOINT_KEY: undefined, ISOHOOK_STORE: store, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
      if (closeAfterFirstChunk) child.stdout.destroy();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function cliJson(argv: string[]) {
  const io = fakeIO(dir, { ISOHOOK_STORE: store, USER: "tester" });
  const code = await runCli([...argv, "--json"], io);
  return { code, value: JSON.parse(io.out().trimEnd().split("\n").at(-1) ?? "null"), stderr: io.err() };
}

async function checkpointFiles(): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith(".checkpoint.json"));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-edges-"));
  store = join(dir, "store.db");
  const spec = JSON.parse(await readFile(join(REPO, "scenarios/acme-git-push.json"), "utf8"));
  delete spec.hook;
  scenario = join(dir, "push.json");
  const roomy = { limits: { timeoutMs: 500 }, budgets: { turnMs: 10_000, runMs: 30_000 } };
  await writeFile(scenario, JSON.stringify({ ...spec, ...roomy }));
  expect((await cliJson(["migrate"])).code).toBe(0);
  const upload = await cliJson(["upload", "--tenant", "acme", join(REPO, "hooks/ask-before-push"), "--activate"]);
  expect(upload.code, JSON.stringify(upload.value)).toBe(0);
  const log = await cliJson(["log", "--tenant", "acme", "--on", "--sample", "1"]);
  expect(log.code).toBe(0);
}, 120_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("isohook run at the CLI's edges", { timeout: 120_000 }, () => {
  it("keeps the checkpoint and the decision-log records when the reader closes stdout mid-run", async () => {
    const before = await cliJson(["decisions", "--tenant", "acme"]);
    const piped = await isohook(["run", "--scenario", scenario], { ISOHOOK_CHECKPOINT_KEY: KEY }, true);
    expect(piped.stderr).toBe("");
    expect(piped.code).toBe(0);
    expect(piped.stdout).not.toContain("waiting for approval");
    const [file, ...more] = await checkpointFiles();
    expect(more).toEqual([]);
    expect(file).toMatch(/^run_[0-9a-f-]+\.checkpoint\.json$/);
    const after = await cliJson(["decisions", "--tenant", "acme"]);
    expect(after.value.decisions.length).toBeGreaterThan(before.value.decisions.length);

    const resumed = await isohook(["run", "--resume", file ?? "", "--approve", "call_1_2"], {
      ISOHOOK_CHECKPOINT_KEY: KEY,
    });
    expect(resumed.stderr).toBe("");
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain("✓ $ git push origin main ok");
    await rm(join(dir, file ?? ""));
  });

  it("writes a text-mode pause to a default file and says how to continue", async () => {
    const paused = await isohook(["run", "--scenario", scenario], { ISOHOOK_CHECKPOINT_KEY: KEY });
    expect(paused.code).toBe(0);
    const [file] = await checkpointFiles();
    expect(paused.stdout).toContain(
      `  checkpoint: ${file} — continue with: isohook run --resume ${file} --approve call_1_2`,
    );
    expect(paused.stdout).not.toContain("--json result line");
    await rm(join(dir, file ?? ""));

    // A run id names no other folder: the default file stays in the working directory.
    const escaping = await isohook(["run", "--scenario", scenario, "--run-id", "../../escape"], {
      ISOHOOK_CHECKPOINT_KEY: KEY,
    });
    expect(escaping.code).toBe(0);
    expect(await checkpointFiles()).toEqual(["______escape.checkpoint.json"]);
    expect(escaping.stdout).toContain("checkpoint: ______escape.checkpoint.json");
    await rm(join(dir, "______escape.checkpoint.json"));
  });

  it("resumes from the whole --json output of a paused run, not only its last line", async () => {
    const paused = await isohook(["run", "--scenario", scenario, "--json"], { ISOHOOK_CHECKPOINT_KEY: KEY });
    expect(paused.code).toBe(0);
    expect(paused.stdout.trimEnd().split("\n").length).toBeGreaterThan(1);
    expect(await checkpointFiles()).toEqual([]);
    const output = join(dir, "paused.jsonl");
    await writeFile(output, paused.stdout);
    const resumed = await isohook(["run", "--resume", output, "--approve", "call_1_2", "--json"], {
      ISOHOOK_CHECKPOINT_KEY: KEY,
    });
    expect(resumed.stderr).toBe("");
    expect(JSON.parse(resumed.stdout.trimEnd().split("\n").at(-1) ?? "null")).toMatchObject({
      type: "result",
      stopReason: "completed",
    });
    await writeFile(output, 'not json\n{"type":"turn"}\n');
    const refused = await isohook(["run", "--resume", output, "--approve", "call_1_2"], {
      ISOHOOK_CHECKPOINT_KEY: KEY,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is not JSON/);
  });

  it("refuses a short checkpoint key before the run starts, naming the variable (usage, exit 2)", async () => {
    const before = await cliJson(["decisions", "--tenant", "acme"]);
    const short = await isohook(["run", "--scenario", scenario], { ISOHOOK_CHECKPOINT_KEY: "short" });
    expect(short.code).toBe(2);
    expect(short.stdout).toBe("");
    expect(short.stderr).toMatch(/ISOHOOK_CHECKPOINT_KEY .*at least 16 bytes/);
    expect(short.stderr).not.toContain("checkpointKey");
    const after = await cliJson(["decisions", "--tenant", "acme"]);
    expect(after.value.decisions.length).toBe(before.value.decisions.length);
  });
});

describe("typos that would pass silently", { timeout: 120_000 }, () => {
  it("refuses a log switch or a listing for a tenant the store has never seen, with a did-you-mean", async () => {
    for (const argv of [
      ["log", "--tenant", "acmee", "--on"],
      ["log", "--tenant", "acmee"],
      ["decisions", "--tenant", "acmee"],
    ]) {
      const { code, value } = await cliJson(argv);
      expect(code).toBe(1);
      expect(value.error).toMatchObject({ code: "unknown_tenant" });
      expect(value.error.message).toContain("(did you mean `acme`?)");
    }
    const audit = await cliJson(["audit", "--tenant", "acmee"]);
    expect(JSON.stringify(audit.value)).not.toContain("log.");
  });

  it("says how to switch the log on when a tenant's log is off", async () => {
    expect((await cliJson(["log", "--tenant", "acme", "--off"])).code).toBe(0);
    const io = fakeIO(dir, { ISOHOOK_STORE: store, USER: "tester" });
    expect(await runCli(["decisions", "--tenant", "acme", "--since", "1s"], io)).toBe(0);
    expect(io.out()).toBe(
      "No recorded calls of acme. The decision log of acme is off: switch it on with `isohook log --tenant acme --on`.\n",
    );
    expect((await cliJson(["log", "--tenant", "acme", "--on", "--sample", "1"])).code).toBe(0);
  });

  it("fails replay --fail-on-diff over no recorded calls, and warns without it", async () => {
    const gate = await cliJson(["replay", "--tenant", "acme", "--version", "1", "--since", "1s", "--fail-on-diff"]);
    expect(gate.code).toBe(1);
    expect(gate.value.error).toMatchObject({ code: "nothing_replayed" });
    const io = fakeIO(dir, { ISOHOOK_STORE: store, USER: "tester" });
    const code = await runCli(["replay", "--tenant", "acme", "--version", "1", "--since", "1s"], io);
    expect(code).toBe(0);
    expect(io.err()).toContain("warning: no calls to replay, nothing was compared");
  });

  it("suggests the hook point a typo meant, in every command that takes one", async () => {
    for (const argv of [
      ["init", join(dir, "typo"), "--point", "tool.cal"],
      ["decisions", "--tenant", "acme", "--point", "tool.cal"],
      ["schema", "tool.cal"],
    ]) {
      const { code, value } = await cliJson(argv);
      expect(code).toBe(2);
      expect(value.error.message).toContain("Unknown hook point `tool.cal`");
      expect(value.error.message).toContain("(did you mean `tool.call`?)");
    }
  });
});

describe("one JSON failure shape", { timeout: 120_000 }, () => {
  it("ends a failing test --json with the error object, after its report", async () => {
    const events = join(dir, "wrong.jsonl");
    const call = { call: { id: "c1", name: "shell", args: { command: "ls" } }, batch: { index: 0, size: 1 } };
    await writeFile(events, `${JSON.stringify({ point: "tool.call", event: call, expect: { type: "block" } })}\n`);
    const io = fakeIO(dir, {});
    const code = await runCli(["test", join(REPO, "hooks/block-destructive-shell"), "--events", events, "--json"], io);
    expect(code).toBe(1);
    const [report, error, ...more] = io
      .out()
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(more).toEqual([]);
    expect(report).toMatchObject({ passed: 0, failed: 1 });
    expect(error).toEqual({ error: { code: "fixtures_failed", message: "1 of 1 lines failed in wrong.jsonl" } });
  });

  it("prints help as JSON with --json", async () => {
    for (const argv of [["run", "--help"], ["--help"], ["help", "log"]]) {
      const io = fakeIO(dir, {});
      expect(await runCli([...argv, "--json"], io)).toBe(0);
      const parsed = JSON.parse(io.out());
      expect(Object.keys(parsed)).toEqual(["help"]);
      expect(parsed.help).toMatch(/^Usage: isohook /);
    }
  });
});

describe("fuzz failures", { timeout: 120_000 }, () => {
  it("print the zod issue with the bad field's path and the replay command, as test does", async () => {
    const folder = join(dir, "bad-result");
    await mkdir(folder);
    await writeFile(
      join(folder, "index.ts"),
      'import { defineHooks } from "isohook/hook-sdk";\nexport default defineHooks({ toolCall: () => ({ type: "blok" }) as never });\n',
    );
    const io = fakeIO(dir, {});
    const code = await runCli(["fuzz", folder, "--seed", "7", "--runs", "5", "--no-grow", "--points", "tool.call"], io);
    expect(code).toBe(1);
    expect(io.out()).toMatch(/✗ invalid_result: .* — result\.type: /);
    expect(io.out()).toContain(`replay: isohook fuzz ${folder} --points tool.call --runs 5 --seed 7 --no-grow`);
  });
});
