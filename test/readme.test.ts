/**
 * The README's samples are the real output of today's build: each `$ npm run --silent isohook -- …`
 * in a checked block runs here, in order, against a fresh store, and its output must equal the README's
 * once the parts that differ run to run (times, durations, seeds, run ids) are masked.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/index.js";
import { fakeIO } from "./cli/fake-io.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const PROMPT = /^\$ (?:((?:\w+=\S+ )*)npm run --silent isohook -- (.*?))?(?:\s+#.*)?$/;

interface Step {
  readonly env: Record<string, string>;
  readonly argv: string[];
  readonly expected: string;
}

/** The steps of every README block that contains an `npm run --silent isohook --` line. */
function stepsOf(readme: string): Step[][] {
  return fencedBlocks(readme)
    .filter((b) => b.includes("$ npm run --silent isohook -- "))
    .map((block) => {
      const steps: Step[] = [];
      let env: Record<string, string> = {};
      for (const line of block.split("\n")) {
        const exported = /^\$ export (.*)$/.exec(line);
        if (exported) {
          env = {
            ...env,
            ...Object.fromEntries((exported[1] ?? "").split(" ").map((kv) => kv.split("=") as [string, string])),
          };
          continue;
        }
        const prompt = PROMPT.exec(line);
        if (prompt?.[2] !== undefined) {
          const local = Object.fromEntries(
            (prompt[1] ?? "")
              .trim()
              .split(" ")
              .filter(Boolean)
              .map((kv) => kv.split("=") as [string, string]),
          );
          steps.push({ env: { ...env, ...local }, argv: prompt[2].split(" "), expected: "" });
        } else if (steps.length > 0) {
          const last = steps.pop() as Step;
          steps.push({ ...last, expected: `${last.expected}${line}\n` });
        }
      }
      return steps;
    });
}

/** The text of each fenced block without a language (outputs and sessions). */
function fencedBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  let open: { plain: boolean; lines: string[] } | undefined;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) {
      if (open === undefined) open = { plain: line === "```", lines: [] };
      else {
        if (open.plain) blocks.push(`${open.lines.join("\n")}\n`);
        open = undefined;
      }
    } else open?.lines.push(line);
  }
  return blocks;
}

/** Masks what differs from run to run. */
function mask(text: string): string {
  return text
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/g, "<time>")
    .replace(/\b\d+(\.\d+)? (ms|s)\b/g, "<n> $2")
    .replace(/seed \d+/g, "seed <n>")
    .replace(/run_[0-9a-f-]+…?/g, "run_<id>")
    .replace(/ +$/gm, "")
    .trimEnd();
}

/**
 * Hook calls are timed, and a fixture's first call in a fresh worker is cold: on a machine loaded by other
 * suites it can run past the default 50 ms (its wall-clock backstop is at most 5 × that). The commands that
 * run a hook's fixtures (`test`, and `upload` through its deploy gate) run here with the 250 ms the other CLI
 * tests give well-behaved hooks; what they print does not name the timeout, and 250 ms still fails a fixture
 * that backtracks (the old fork-bomb pattern took 610 ms).
 */
function roomy(argv: readonly string[]): string[] {
  const runsFixtures = argv[0] === "test" || argv[0] === "upload";
  return runsFixtures && !argv.includes("--timeout") ? [...argv, "--timeout", "250"] : [...argv];
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-readme-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("README", () => {
  it("shows the real output of every isohook command it runs", { timeout: 240_000 }, async () => {
    const readme = await readFile(join(REPO, "README.md"), "utf8");
    const blocks = stepsOf(readme);
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    for (const [b, steps] of blocks.entries()) {
      for (const step of steps) {
        const env = { ...step.env, ISOHOOK_STORE: join(dir, `store-${b}.db`) };
        const io = fakeIO(REPO, env);
        const code = await runCli(roomy(step.argv), io);
        const actual = `${io.out()}${io.err()}${code === 0 ? "" : `[exit ${code}]\n`}`;
        expect(mask(actual), `README: $ isohook ${step.argv.join(" ")}`).toBe(mask(step.expected));
      }
    }
  });
});
