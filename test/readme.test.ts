/**
 * The samples of the README and of every guide in docs/ are the real output of today's build: each
 * `$ npm run --silent isohook -- …` in a checked block runs here, in order, against a store of its block's
 * own, and its output must equal the page's once the parts that differ run to run (times, durations, seeds,
 * run ids) are masked. Pages run side by side; a page's blocks run in order.
 */
import { access, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
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

/** The README and every Markdown page in docs/, relative to the repo. */
async function pages(): Promise<string[]> {
  const docs = (await readdir(join(REPO, "docs"))).filter((f) => f.endsWith(".md")).sort();
  return ["README.md", ...docs.map((f) => `docs/${f}`)];
}

/** The steps of every block that contains an `npm run --silent isohook --` line. */
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
  return (
    text
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/g, "<time>")
      .replace(/\b\d+(\.\d+)? (ms|s)\b/g, "<n> $2")
      .replace(/seed \d+/g, "seed <n>")
      // The gate fuzzes a point for 100 events or 2 s, whichever comes first: a loaded machine runs fewer.
      .replace(/^( {2}fuzz \S+: )\d+ events/gm, "$1<n> events")
      .replace(/run_[0-9a-f-]+…?/g, "run_<id>")
      .replace(/ +$/gm, "")
      .trimEnd()
  );
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

const PAGES = await pages();

describe("the samples of the README and docs/", () => {
  it("replays the CLI samples of the front page and the operating guide", async () => {
    const counts = await Promise.all(
      ["README.md", "docs/operating.md"].map(async (page) => stepsOf(await readFile(join(REPO, page), "utf8")).length),
    );
    expect(counts.every((n) => n >= 1)).toBe(true);
  });

  it("links only to files that exist", async () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      const text = await readFile(join(REPO, page), "utf8");
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (target === undefined || /^[a-z]+:/.test(target)) continue;
        const path = join(dirname(join(REPO, page)), target);
        await access(path).catch(() => broken.push(`${page} → ${target}`));
      }
    }
    expect(broken).toEqual([]);
  });

  it.concurrent.each(PAGES)(
    "%s shows the real output of every isohook command it runs",
    { timeout: 240_000 },
    async (page) => {
      const blocks = stepsOf(await readFile(join(REPO, page), "utf8"));
      const stores = join(dir, page.replace(/[/.]/g, "-"));
      for (const [b, steps] of blocks.entries()) {
        for (const step of steps) {
          const env = { ...step.env, ISOHOOK_STORE: `${stores}-store-${b}.db` };
          const io = fakeIO(REPO, env);
          const code = await runCli(roomy(step.argv), io);
          // The page names its own store; each block here has one of its own.
          const shownStore = step.env.ISOHOOK_STORE ?? "<store>";
          const actual = `${io.out()}${io.err()}${code === 0 ? "" : `[exit ${code}]\n`}`.replaceAll(
            env.ISOHOOK_STORE,
            shownStore,
          );
          expect(mask(actual), `${page}: $ isohook ${step.argv.join(" ")}`).toBe(mask(step.expected));
        }
      }
    },
  );
});
