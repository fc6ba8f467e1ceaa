import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteBundleStore } from "../../src/store/index.js";
import { dropSchema, freshSchema, pgUrl, postgresAvailable } from "../store/helpers/postgres.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const KEY = "test checkpoint key: 32 bytes ok";
const pg = await postgresAvailable();
let dir: string;
let scenario: string;

function isohook(args: string[], env: Record<string, string | undefined> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--no-node-snapshot", "--import", "tsx", "src/cli/main.ts", ...args], {
      cwd: REPO,
      env: { ...process.env, ISOHOOK_STORE: undefined, ISOHOOK_CHECKPOINT_KEY: KEY, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-resume-once-"));
  const spec = JSON.parse(await readFile(join(REPO, "scenarios/acme-git-push.json"), "utf8"));
  scenario = join(dir, "push.json");
  const roomy = { limits: { timeoutMs: 500 }, budgets: { turnMs: 10_000, runMs: 30_000 } };
  await writeFile(scenario, JSON.stringify({ ...spec, hook: join(REPO, "hooks/ask-before-push"), ...roomy }));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Pauses the push scenario, then resumes its checkpoint from two processes at once on `store`. */
async function resumeTwice(name: string, storeArgs: string[], env: Record<string, string> = {}) {
  const checkpoint = join(dir, `${name}.checkpoint.json`);
  const paused = await isohook(["run", "--scenario", scenario, "--checkpoint", checkpoint, "--checkpoint-ttl", "2h"]);
  expect(paused.stderr).toBe("");
  expect(paused.code).toBe(0);
  const body = JSON.parse(JSON.parse(await readFile(checkpoint, "utf8")).body);
  expect(Date.parse(body.expiresAt) - Date.parse(body.createdAt)).toBe(2 * 3_600_000);
  const resume = () => isohook(["run", "--resume", checkpoint, "--approve", "call_1_2", ...storeArgs], env);
  return Promise.all([resume(), resume()]);
}

describe("isohook run --resume on a shared store", { timeout: 180_000 }, () => {
  it("resumes a checkpoint once from two processes on one SQLite store, and refuses the other", async () => {
    const file = join(dir, "store.db");
    await (await SqliteBundleStore.open(file)).close();
    const outcomes = await resumeTwice("sqlite", ["--store", file]);
    expect(outcomes.map((o) => o.code).sort()).toEqual([0, 1]);
    const refused = outcomes.find((o) => o.code === 1);
    expect(refused?.stderr).toMatch(/was resumed already; a paused run goes on once/);
    expect(outcomes.find((o) => o.code === 0)?.stdout).toContain("$ git push origin main");
  });

  it.runIf(pg)("does the same on a PostgreSQL store named by ISOHOOK_STORE", async () => {
    const schema = freshSchema();
    try {
      const url = pgUrl(schema);
      expect((await isohook(["migrate", "--store", url])).code).toBe(0);
      const outcomes = await resumeTwice("postgres", [], { ISOHOOK_STORE: url });
      expect(outcomes.map((o) => o.code).sort()).toEqual([0, 1]);
      expect(outcomes.find((o) => o.code === 1)?.stderr).toMatch(/was resumed already/);
    } finally {
      await dropSchema(schema);
    }
  });

  it("refuses a --checkpoint-ttl that is not an age from 1s to 365d as a usage error", async () => {
    const bad = await isohook(["run", "--scenario", scenario, "--checkpoint-ttl", "forever"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Expected --checkpoint-ttl to be an age from 1s to 365d/);
  });
});
