/**
 * Every CLI command writes only `Printed` text (src/terminal): a tenant's block reason, ask reason and
 * question, a model's tool name and a stored run's events reach the operator's terminal escaped and on
 * their own line, in the run's approval lines, `decisions`, `stats` and `replay` alike. Each command is run
 * directly (not through runCli, whose write-side escaping would hide a site that forgot).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInlineExecutor } from "../../sandbox/worker/index.js";
import { compileHook } from "../../src/bundler/index.js";
import { type CliIO, parseCommandArgs } from "../../src/cli/command.js";
import { decisionsCommand } from "../../src/cli/commands/decisions.js";
import { createReplayCommand } from "../../src/cli/commands/replay.js";
import { createRunCommand } from "../../src/cli/commands/run.js";
import { statsCommand } from "../../src/cli/commands/stats.js";
import type { Command } from "../../src/cli/index.js";
import { type HookPoint, SDK_VERSION, TenantId } from "../../src/protocol/index.js";
import { SqliteBundleStore } from "../../src/store/index.js";
import { line, lines, MAX_FIELD_CHARS, printable } from "../../src/terminal/index.js";
import { fakeIO } from "../cli/fake-io.js";
import { expectContained, expectNothingRaw, FORGERY } from "./terminal.js";

const ROOMY = { timeoutMs: 1_000 };
const KEY = { ISOHOOK_CHECKPOINT_KEY: "k".repeat(32) };
const T = JSON.stringify(FORGERY);

/** Blocks `block` with the forgery as reason; asks for `ask` with it as reason and question. */
const HOOK = `export default {
  toolCall(event) {
    const command = String(event.call.args.command);
    if (command === "block") return { type: "block", reason: ${T} };
    if (command === "ask") return { type: "ask", reason: ${T}, question: ${T} };
  },
};
`;

let dir: string;
let store: string;
const inline = async () => createInlineExecutor({ limits: ROOMY, quiet: true });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-terminal-commands-"));
  store = join(dir, "store.db");
  await writeFile(join(dir, "index.ts"), HOOK);
  const built = await compileHook(join(dir, "index.ts"), { cwd: dir });
  const hookPoints: HookPoint[] = ["tool.call"];
  const manifest = { hash: built.hash, bytes: built.bytes, hookPoints, sdkVersion: SDK_VERSION, entry: built.entry };
  const opened = await SqliteBundleStore.open(store);
  try {
    const tenantId = TenantId.parse("mallory");
    await opened.upload({ tenantId, code: built.code, manifest, by: "ops", activate: true });
    await opened.setLogSettings({
      tenantId,
      settings: { sample: 1, mask: [], retainDays: 30, retain: 1000 },
      by: "ops",
    });
  } finally {
    await opened.close();
  }
  const tool = { description: "runs", parameters: { type: "object" }, result: "done" };
  await writeFile(
    join(dir, "scenario.json"),
    JSON.stringify({
      tenant: "mallory",
      limits: ROOMY,
      input: "go",
      tools: [
        { name: "shell", ...tool },
        { name: "shell_x", ...tool },
      ],
      model: {
        turns: [
          { text: "", toolCalls: [{ name: "shell", args: { command: "block" } }] },
          { text: "", toolCalls: [{ name: "shell_x", args: { command: "ask", note: FORGERY } }] },
          { text: "done" },
        ],
      },
    }),
  );
}, 60_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

async function direct(command: Command, argv: string[]) {
  const io = fakeIO(dir, KEY);
  const code = await command.run(parseCommandArgs(command, argv), io);
  return { code, stdout: io.out(), stderr: io.err() };
}

describe("the one printable-line writer", () => {
  it("escapes every value, keeps the template's own line breaks and cuts an overlong value", () => {
    const text = line`a ${"x\ny\u001b[2K"} b\n`;
    expect(text).toBe("a x\\ny\\x1b[2K b\n");
    const long = line`${"z".repeat(MAX_FIELD_CHARS + 10)}`;
    expect(long).toBe(`${"z".repeat(MAX_FIELD_CHARS)}… (10 more characters)`);
    expect(lines([line`one`, printable("two\nthree")])).toBe("one\ntwo\\nthree\n");
  });

  it("is the only text the command writers take", () => {
    const io: CliIO = fakeIO(dir);
    // @ts-expect-error a plain string is not Printed: tenant text cannot reach a writer unescaped.
    io.stdout(`raw ${FORGERY}\n`);
    io.stdout(line`escaped ${FORGERY}\n`);
  });
});

describe("commands showing a hostile tenant's text", () => {
  it("run shows the block, the ask and the held call only escaped, and stores them", async () => {
    const run = createRunCommand({ openExecutor: inline });
    const { code, stdout } = await direct(run, ["--scenario", "scenario.json", "--store", store, "--run-id", "r1"]);
    expect(code).toBe(0);
    expectContained(stdout);
    const held = stdout.split("\n").find((l) => l.startsWith("      asked by"));
    expect(held).toMatch(/^ {6}asked by tenant:mallory@v1: “ok\\x1b\[1A\\x1b\[2K\\r/);
    expect(stdout).toContain("checkpoint: r1.checkpoint.json");
  });

  it("decisions, stats and replay show the stored records only escaped", async () => {
    const decisions = await direct(decisionsCommand, ["--tenant", "mallory", "--store", store]);
    expect(decisions.code).toBe(0);
    expectContained(decisions.stdout);
    expect(decisions.stdout).toContain("block");

    const stats = await direct(statsCommand, ["--tenant", "mallory", "--store", store]);
    expect(stats.code).toBe(0);
    expectNothingRaw(stats.stdout);
    expect(stats.stdout).toContain("mallory: 2 hook calls");

    const replay = createReplayCommand({ openExecutor: inline });
    const replayed = await direct(replay, ["--tenant", "mallory", "--version", "1", "--store", store]);
    expect(replayed.code).toBe(0);
    expectNothingRaw(replayed.stdout);
    expect(replayed.stdout).toContain("2 calls compared: 2 agreed");
  });
});
