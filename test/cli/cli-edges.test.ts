import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
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
