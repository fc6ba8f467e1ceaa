import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInlineExecutor } from "../../sandbox/worker/index.js";
import { parseCommandArgs } from "../../src/cli/command.js";
import { createTestCommand } from "../../src/cli/commands/test.js";
import { runCli } from "../../src/cli/index.js";
import type { LimitsInput } from "../../src/protocol/index.js";
import { fakeIO } from "./fake-io.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

async function run(argv: string[], cwd = REPO) {
  const io = fakeIO(cwd);
  const code = await runCli(argv, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

/** Runs the command on an inline sandbox, recording the limits it asked for. */
async function runInline(argv: string[], cwd: string) {
  const asked: LimitsInput[] = [];
  const command = createTestCommand({
    openExecutor: async (limits) => {
      asked.push(limits);
      return createInlineExecutor({ limits, quiet: true });
    },
  });
  const io = fakeIO(cwd);
  const code = await command.run(parseCommandArgs(command, argv), io);
  return { code, stdout: io.out(), stderr: io.err(), asked };
}

const EVENT = (command: string) => ({
  call: { id: "c1", name: "shell", args: { command } },
  batch: { index: 0, size: 1 },
});
const jsonl = (...lines: unknown[]) => `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-test-command-"));
  await writeFile(
    join(dir, "policy.ts"),
    `export default {
  toolCall(event, ctx) {
    const command = String(event.call.args.command);
    console.log("saw", command);
    ctx.state.seen = (ctx.state.seen ?? 0) + 1;
    if (command === "loop") for (;;) {}
    if (command === "bad") return { type: "nope", reason: 7 };
    if (command.startsWith("rm")) return { type: "block", reason: "no rm" };
  },
};
`,
  );
  await writeFile(
    join(dir, "events.jsonl"),
    jsonl(
      { point: "tool.call", event: EVENT("rm -rf /"), expect: { type: "block", reason: "no rm" } },
      { point: "tool.call", event: EVENT("ls"), ctx: { state: { seen: 4 } }, expect: { type: "block" } },
      { point: "tool.call", event: EVENT("ls") },
    ),
  );
  await writeFile(
    join(dir, "loop.jsonl"),
    jsonl({ point: "tool.call", event: EVENT("loop"), expect: { failure: "timeout" } }),
  );
  await writeFile(join(dir, "badresult.jsonl"), jsonl({ point: "tool.call", event: EVENT("bad") }));
  await writeFile(
    join(dir, "bad.jsonl"),
    `${JSON.stringify({ point: "tool.call", event: EVENT("ls") })}\n{"point": 1}\n`,
  );
  await writeFile(
    join(dir, "fs.ts"),
    'import { readFileSync } from "node:fs";\nexport default { toolCall() { readFileSync("x"); } };\n',
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("isohook test", () => {
  it("runs a hook folder's fixtures.jsonl in the process sandbox and exits 0 when all pass", async () => {
    // 250 ms, not the default 50: the first fixture's call is cold, and a loaded machine can take it past 50 ms.
    const { code, stdout, stderr } = await run(["test", "hooks/block-destructive-shell", "--timeout", "250"]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines.filter((l) => l.startsWith("ok   line "))).toHaveLength(15);
    expect(lines.at(-1)).toBe("15 passed, 0 failed — hooks/block-destructive-shell/fixtures.jsonl");
    expect(stdout).toContain('ok   line 1 tool.call → block {"reason":"destructive shell command: rm -rf /"}');
  });

  it("prints one JSON object with each outcome, its point, costs, logs and state, then the error object on a mismatch", async () => {
    const { code, stdout } = await run(["test", "policy.ts", "--events", "events.jsonl", "--json"], dir);
    expect(code).toBe(1);
    const [output, error, ...more] = stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(more).toEqual([]);
    expect(error).toEqual({ error: { code: "fixtures_failed", message: "1 of 3 lines failed in events.jsonl" } });
    expect(output).toMatchObject({ file: "events.jsonl", passed: 1, failed: 1, unchecked: 1 });
    const lines = output.results;
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({
      line: 1,
      point: "tool.call",
      type: "decided",
      result: { type: "block", reason: "no rm" },
      state: { seen: 1 },
      logs: ["saw rm -rf /"],
      passed: true,
    });
    expect(lines[1]).toMatchObject({ line: 2, result: null, state: { seen: 5 }, passed: false });
    expect(lines[1].mismatch).toBe("expected a `block` result, got the no-op");
    expect(lines[2]).toMatchObject({ line: 3, type: "decided", result: null });
    expect(lines[2]).not.toHaveProperty("passed");
    for (const line of lines) {
      expect(typeof line.runMs).toBe("number");
      expect(typeof line.cpuMs).toBe("number");
    }
  });

  it("prints readable lines with the mismatch and the logs under each", async () => {
    const { code, stdout } = await runInline(["policy.ts", "--events", "events.jsonl"], dir);
    expect(code).toBe(1);
    expect(stdout).toContain("FAIL line 2 tool.call → no-op (");
    expect(stdout).toContain("       expected a `block` result, got the no-op\n       | saw ls\n");
    expect(stdout.trimEnd().split("\n").at(-1)).toBe("1 passed, 1 failed, 1 without expect — events.jsonl");
  });

  it("prints why a result is invalid and where: the zod issue with its path", async () => {
    const { stdout } = await runInline(["policy.ts", "--events", "badresult.jsonl"], dir);
    expect(stdout).toContain(
      "line 1 tool.call → failed invalid_result: The hook returned a result that tool.call does not accept — result.type: ",
    );
    expect(stdout).toContain("result.type: Invalid discriminator value. Expected 'rewrite' | 'block' | 'ask' | 'stop'");
  });

  it("runs again on every save with --watch until stopped", { timeout: 30_000 }, async () => {
    const watched = await mkdtemp(join(tmpdir(), "isohook-watch-"));
    try {
      await writeFile(join(watched, "index.ts"), "export default { toolCall() { return undefined; } };\n");
      const fixture = { point: "tool.call", event: EVENT("rm -rf /"), expect: { type: "block" } };
      await writeFile(join(watched, "fixtures.jsonl"), jsonl(fixture));
      const controller = new AbortController();
      const command = createTestCommand({
        openExecutor: async (limits) => createInlineExecutor({ limits, quiet: true }),
      });
      const io = { ...fakeIO(watched), signal: controller.signal };
      const running = command.run(parseCommandArgs(command, [".", "--watch"]), io);
      const until = async (text: RegExp) => {
        for (let i = 0; i < 200 && !text.test(io.out()); i++) await new Promise((r) => setTimeout(r, 50));
        expect(io.out()).toMatch(text);
      };
      await until(/0 passed, 1 failed[\s\S]*watching \. for changes/);
      await writeFile(
        join(watched, "index.ts"),
        'export default { toolCall() { return { type: "block", reason: "no" }; } };\n',
      );
      await until(/1 passed, 0 failed — fixtures\.jsonl\n— watching/);
      await writeFile(join(watched, "index.ts"), "export default { toolCall() { return {{ } };\n");
      for (let i = 0; i < 200 && !io.err().includes("isohook test:"); i++) await new Promise((r) => setTimeout(r, 50));
      expect(io.err()).toContain("isohook test: Cannot bundle");
      controller.abort();
      expect(await running).toBe(0);
    } finally {
      await rm(watched, { recursive: true, force: true });
    }
  });

  it("passes --timeout and --memory to the sandbox", async () => {
    const { code, stdout, asked } = await runInline(
      ["policy.ts", "--events", "loop.jsonl", "--timeout", "20", "--memory", "16"],
      dir,
    );
    expect(asked).toEqual([{ timeoutMs: 20, memoryMb: 16 }]);
    expect(code).toBe(0);
    expect(stdout).toContain("ok   line 1 tool.call → failed timeout:");
  });

  it("says how to fix a missing or invalid events file and a hook that does not bundle", async () => {
    const missing = await run(["test", "policy.ts"], dir);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      "No events file fixtures.jsonl: pass --events <file.jsonl>, or add fixtures.jsonl",
    );
    const invalid = await run(["test", "policy.ts", "--events", "bad.jsonl"], dir);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain("bad.jsonl:2: point: ");
    const fs = await run(["test", "fs.ts", "--events", "events.jsonl"], dir);
    expect(fs.code).toBe(1);
    expect(fs.stderr).toContain("node:fs");
  });

  it("rejects wrong usage with exit code 2", async () => {
    expect((await run(["test"], dir)).code).toBe(2);
    expect((await run(["test", "a", "b"], dir)).code).toBe(2);
    const timeout = await run(["test", "policy.ts", "--timeout", "0"], dir);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain("Expected --timeout to be an integer from 1 to 60000, got `0`");
  });
});
