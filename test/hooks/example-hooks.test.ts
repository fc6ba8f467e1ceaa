/**
 * Every example hook in hooks/ — bundled by the real bundler and run through the real process sandbox —
 * decides its fixtures.jsonl as the fixtures expect.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import { parseFixtures, runFixtures } from "../../src/fixture-runner/index.js";
import { type HookExecutor, TenantId } from "../../src/protocol/index.js";

const HOOKS = fileURLToPath(new URL("../../hooks/", import.meta.url));
const names = (await readdir(HOOKS, { withFileTypes: true }))
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

/** Wall-clock timeouts: room for well-behaved hooks on a machine busy with other suites. */
const limits = { timeoutMs: 250 };

let executor: HookExecutor;
beforeAll(async () => {
  executor = await createHookExecutor({ workers: 1, spareWorker: false, limits });
});
afterAll(async () => {
  await executor?.close();
});

describe("example hooks", () => {
  it("include every policy the README promises", () => {
    for (const name of [
      "block-destructive-shell",
      "redact-secrets",
      "safe-workdir",
      "sql-row-limit",
      "restrict-tools",
      "turn-budget",
      "keep-working",
      "runaway",
    ]) {
      expect(names).toContain(name);
    }
  });

  describe.each(names)("%s", (name) => {
    it("has a one-line README", async () => {
      const readme = (await readFile(join(HOOKS, name, "README.md"), "utf8")).trim();
      expect(readme.length).toBeGreaterThan(20);
      expect(readme.split("\n")).toHaveLength(1);
    });

    it("passes its fixtures in the process sandbox", async () => {
      const file = join(HOOKS, name, "fixtures.jsonl");
      const fixtures = parseFixtures(await readFile(file, "utf8"), file);
      expect(fixtures.length).toBeGreaterThanOrEqual(4);
      expect(fixtures.some((f) => f.expect?.type === "noop")).toBe(true);
      // The composed policies (coding-agent, data-agent) share code across hooks/: it is their hook folder.
      const built = await buildBundle(join(HOOKS, name), { executor, root: HOOKS });
      const reports = await runFixtures({
        executor,
        bundle: { hash: built.manifest.hash, code: built.code },
        tenantId: TenantId.parse("example"),
        fixtures,
        limits,
      });
      const failed = reports
        .filter((r) => r.passed !== true)
        .map((r) => `line ${r.line}: ${r.mismatch ?? "no expectation"}`);
      expect(failed).toEqual([]);
      expect(reports).toHaveLength(fixtures.length);
    });
  });
});
