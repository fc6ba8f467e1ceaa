/**
 * Every file path the CLI takes is read by one hardened reader (src/cli/operator-file.ts): a FIFO, a link
 * to /dev/zero or a directory fails at once naming what it is, as a JSON error under --json, and a
 * checkpoint file is parsed only once its nesting and number of values are found bounded.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadScenario, ScenarioError } from "../../src/agent/index.js";
import { runCli } from "../../src/cli/index.js";
import { fakeIO } from "./fake-io.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "isohook-operator-files-"));
  execFileSync("mkfifo", [join(dir, "pipe")]);
  symlinkSync("/dev/zero", join(dir, "zero"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = { ISOHOOK_CHECKPOINT_KEY: "k".repeat(32) };

async function cli(argv: string[]) {
  const io = fakeIO(dir, KEY);
  const code = await runCli(argv, io);
  return { code, out: io.out(), err: io.err() };
}

/** What each reader must refuse at once: its name, the file under `dir`, and the kind the error names. */
const SPECIAL_FILES: [string, string, string][] = [
  ["a FIFO", "pipe", "a FIFO"],
  ["a link to /dev/zero", "zero", "a character device"],
  ["a directory", ".", "a directory"],
];

const COMMANDS: [string, (file: string) => string[]][] = [
  ["run --resume", (file) => ["run", "--resume", file, "--approve", "c1"]],
  ["run --scenario", (file) => ["run", "--scenario", file]],
  ["shadow-report --from", (file) => ["shadow-report", "--tenant", "acme", "--from", file]],
  ["replay --from", (file) => ["replay", "--tenant", "acme", "--version", "1", "--from", file, "--store", ":memory:"]],
];

describe.each(COMMANDS)("%s", (_, argv) => {
  it.each(SPECIAL_FILES)("refuses %s at once, saying what it is", async (__, file, kind) => {
    const { code, err } = await cli(argv(file));
    expect(code).toBe(1);
    expect(err).toContain(kind);
    expect(err).not.toContain("hook folder");
  });

  it("answers with the one JSON error shape under --json", async () => {
    const { code, out } = await cli([...argv("pipe"), "--json"]);
    expect(code).toBe(1);
    expect(JSON.parse(out.trim())).toMatchObject({ error: { code: "not_a_file" } });
  });
});

describe("mcp --tokens", () => {
  it.each(SPECIAL_FILES)("refuses %s at once, before any sandbox starts, saying what it is", async (_, file, kind) => {
    const { code, err } = await cli(["mcp", "--listen", "127.0.0.1:0", "--tokens", file, "--upstream", "e=node e.js"]);
    expect(code).toBe(1);
    expect(err).toContain("Cannot read the token file");
    expect(err).toContain(kind);
  });
});

describe("the library's loadScenario", () => {
  it.each(SPECIAL_FILES)("refuses %s at once through the same reader, saying what it is", async (_, file, kind) => {
    const error = await loadScenario(join(dir, file)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScenarioError);
    expect((error as Error).message).toMatch(/^Cannot read the scenario /);
    expect((error as Error).message).toContain(kind);
  });

  it("refuses a scenario over the size cap without reading it whole", async () => {
    writeFileSync(join(dir, "huge.json"), " ".repeat(16 * 1024 * 1024 + 1));
    const error = await loadScenario(join(dir, "huge.json")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScenarioError);
    expect((error as Error).message).toMatch(/huge\.json.*(larger|over|MiB|bytes)/);
  });
});

describe("a hostile checkpoint file", () => {
  it.each([
    ["nested arrays", () => `${"[".repeat(4_000_000)}${"]".repeat(4_000_000)}`, "nests deeper"],
    ["a wide array", () => `[${"0,".repeat(4_000_000)}0]`, "more than"],
    [
      "nested arrays beside a real-looking checkpoint",
      () => `{"type":"result","x":${"[".repeat(1000)}${"]".repeat(1000)}}`,
      "nests deeper",
    ],
  ])("is refused as invalid_checkpoint before it is parsed: %s", async (_, text, says) => {
    writeFileSync(join(dir, "hostile.json"), text());
    const { code, err } = await cli(["run", "--resume", "hostile.json", "--approve", "c1"]);
    expect(code).toBe(1);
    expect(err).toContain(says);
    const json = await cli(["run", "--resume", "hostile.json", "--approve", "c1", "--json"]);
    expect(JSON.parse(json.out.trim())).toMatchObject({ error: { code: "invalid_checkpoint" } });
  });
});
