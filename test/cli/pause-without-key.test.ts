/**
 * A run that would pause for approval without ISOHOOK_CHECKPOINT_KEY loses nothing: when the deciding bundle
 * can ask (it exports tool.call and holds the literal "ask"), the run is refused before it starts; when the
 * ask cannot be seen up front (the hook builds the word at run time), the run stops at the ask and no
 * further tool runs.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/index.js";
import { fakeIO } from "./fake-io.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const ROOMY = { limits: { timeoutMs: 500 }, budgets: { turnMs: 10_000, runMs: 30_000 } };

/** Asks about every git push, with the word "ask" built at run time: no literal for an up-front check. */
const HIDDEN_ASK = `const kind = ["a", "s", "k"].join("");
export default {
  toolCall(event) {
    if (String(event.call.args.command).startsWith("git push")) return { type: kind, reason: "push needs a human" };
  },
};
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-pause-key-"));
  await writeFile(join(dir, "hidden.ts"), HIDDEN_ASK);
  const tool = {
    name: "shell",
    description: "Runs a shell command",
    parameters: { type: "object", properties: { command: { type: "string" } } },
    result: "$ {command}\nok",
  };
  const model = (first: string, second: string) => ({
    turns: [
      {
        toolCalls: [
          { name: "shell", args: { command: first } },
          { name: "shell", args: { command: second } },
        ],
      },
      { text: "done" },
    ],
  });
  const scenario = (hook: string) => ({ tenant: "acme", input: "push", tools: [tool], ...ROOMY, hook });
  await writeFile(
    join(dir, "visible.json"),
    JSON.stringify({
      ...scenario(join(REPO, "hooks/ask-before-push")),
      model: model("npm test", "git push origin main"),
    }),
  );
  await writeFile(
    join(dir, "hidden.json"),
    JSON.stringify({ ...scenario("./hidden.ts"), model: model("git push origin main", "rm -rf build") }),
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function run(file: string, json: boolean) {
  const io = fakeIO(dir, {});
  const code = await runCli(["run", "--scenario", file, ...(json ? ["--json"] : [])], io);
  const lines = io
    .out()
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((text) => JSON.parse(text) as { type?: string; error?: { code: string; message: string } });
  return { code, stderr: io.err(), stdout: io.out(), lines: json ? lines : [] };
}

describe("a run that could pause, without a checkpoint key", { timeout: 120_000 }, () => {
  it("is refused before it starts when its hook can ask, saying how to set the key", async () => {
    const text = await run("visible.json", false);
    expect(text.code).toBe(2);
    expect(text.stdout).toBe("");
    expect(text.stderr).toContain("acme's hook v1 can ask for approval, and ISOHOOK_CHECKPOINT_KEY is not set");
    expect(text.stderr).toContain("export ISOHOOK_CHECKPOINT_KEY=");
    expect(text.stderr).toContain("Nothing was run.");

    const json = await run("visible.json", true);
    expect(json.code).toBe(2);
    expect(json.lines).toHaveLength(1);
    expect(json.lines[0]?.error?.code).toBe("usage");
  });

  it("runs as before when the scenario answers its asks", async () => {
    const spec = JSON.parse(await readFile(join(dir, "visible.json"), "utf8"));
    await writeFile(
      join(dir, "answered.json"),
      JSON.stringify({ ...spec, approvals: { call_1_2: { type: "approve" } } }),
    );
    const answered = await run("answered.json", true);
    expect(answered.code).toBe(0);
    expect(answered.lines.filter((l) => l.type === "tool.finished")).toHaveLength(2);
  });

  it("stops at an ask it could not see up front: no tool after it runs", async () => {
    const json = await run("hidden.json", true);
    expect(json.code).toBe(2);
    const last = json.lines.at(-1);
    expect(last?.error?.code).toBe("usage");
    expect(last?.error?.message).toContain("the run stopped at the ask, and no tool ran after it");
    expect(last?.error?.message).toContain("ISOHOOK_CHECKPOINT_KEY");
    // The second call of the batch (rm -rf build) never ran.
    expect(json.lines.filter((l) => l.type === "tool.finished")).toEqual([]);
  });
});
