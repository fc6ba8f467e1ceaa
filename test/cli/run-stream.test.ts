import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/index.js";
import { fakeIO } from "./fake-io.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const ROOMY = { limits: { timeoutMs: 250 }, budgets: { turnMs: 5_000, runMs: 30_000 } };

async function cli(argv: string[]) {
  const io = fakeIO(REPO, {});
  const code = await runCli(argv, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-stream-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The umbrella scenario (stream-guard hook, process sandbox) with roomy limits and `change` applied. */
async function umbrella(change: (scenario: Record<string, unknown>) => void = () => {}) {
  const file = join(REPO, "scenarios", "umbrella-stream-guard.json");
  const scenario = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
  scenario.hook = join(REPO, "hooks", "stream-guard");
  Object.assign(scenario, ROOMY);
  change(scenario);
  const copy = join(dir, `${Math.random().toString(36).slice(2)}.json`);
  await writeFile(copy, JSON.stringify(scenario));
  return copy;
}

describe("isohook run with a streaming model", () => {
  it("prints the text as it streams and stops the run when the tenant's stream hook sees a key", async () => {
    const { code, stdout } = await cli(["run", "--scenario", await umbrella()]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/streaming +Here is the/);
    expect(stdout).toMatch(/model\.stream +tenant:umbrella@v1 +stop “credential in the model's text”/);
    expect(stdout).toMatch(/■ stopped \(credential in the model's text\)/);
    expect(stdout).toContain("answer: (none)");
  });

  it("prints each delta as a model.delta line with --json, and hands peer messages to input.inbound", async () => {
    const file = await umbrella((s) => {
      s.model = { turns: [{ chunks: ["All ", "clear."] }] };
      s.peers = [{ turn: 1, from: "supervisor", content: "Keep it short." }];
    });
    const { code, stdout } = await cli(["run", "--scenario", file, "--json"]);
    expect(code).toBe(0);
    const lines = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.filter((l) => l.type === "model.delta").map((l) => [l.kind, l.delta])).toEqual([
      ["text", "All "],
      ["text", "clear."],
    ]);
    const added = lines.filter((l) => l.type === "message.added").map((l) => l.message);
    expect(added).toContainEqual({ role: "user", content: "Keep it short." });
    expect(lines.at(-1)).toMatchObject({ type: "result", stopReason: "completed", output: "All clear." });
  });

  it("refuses a scenario peer without a turn, naming the field", async () => {
    const file = await umbrella((s) => {
      s.peers = [{ content: "hi" }];
    });
    const { code, stderr } = await cli(["run", "--scenario", file]);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/`peers\[0\]\.turn`/);
  });
});
