import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/index.js";
import { TenantId } from "../../src/protocol/index.js";
import { SqliteBundleStore } from "../../src/store/index.js";
import { fakeIO } from "./fake-io.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-stats-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function cli(argv: string[], env: Record<string, string> = {}) {
  const io = fakeIO(dir, env);
  const code = await runCli(["stats", ...argv], io);
  return { code, stdout: io.out(), stderr: io.err() };
}

const called = (tenantId: string, at: string, point: string, outcome: object, runMs: number) => ({
  type: "hook.called",
  at,
  tenantId,
  turn: 1,
  record: { point, outcome, cpuMs: runMs, runMs, logs: ["SECRET-LOG"] },
});
const block = { type: "decided", result: { type: "block", reason: "SECRET" } };
const noop = { type: "decided", result: null };
const timeout = { type: "failed", failure: { code: "timeout", message: "slow" } };

async function traceFile(name: string, lines: unknown[]): Promise<string> {
  await writeFile(join(dir, name), `${lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n")}\n`);
  return name;
}

describe("isohook stats", () => {
  it("counts one tenant's calls, decisions and failures, with cost percentiles by point", async () => {
    const samples = Array.from({ length: 100 }, (_, i) =>
      called("acme", "2026-12-03T08:00:00Z", "tool.call", noop, i + 1),
    );
    const file = await traceFile("run.jsonl", [
      { type: "run.started", tenantId: "acme" },
      ...samples,
      called("acme", "2026-12-03T08:00:01Z", "tool.call", block, 1),
      called("acme", "2026-12-03T08:00:02Z", "tool.result", timeout, 50),
      called("globex", "2026-12-03T08:00:02Z", "tool.call", timeout, 50),
      { tenant: "acme", event: called("acme", "2026-12-03T08:00:03Z", "tool.result", noop, 2) },
    ]);
    const { code, stdout } = await cli(["--tenant", "acme", "--from", file]);
    expect(code).toBe(0);
    expect(stdout).toContain("acme: 103 hook calls in run.jsonl");
    expect(stdout).toContain("decisions  block 1 · noop 101");
    expect(stdout).toContain("failures   timeout 1");
    expect(stdout).toMatch(/tool\.call +101 +50 ms +99 ms/);
    expect(stdout).toMatch(/tool\.result +2 +2 ms +50 ms/);
    expect(stdout).not.toContain("SECRET");
  });

  it("keeps calls since a time or an age", async () => {
    const file = await traceFile("since.jsonl", [
      called("acme", "2026-12-03T07:00:00Z", "tool.call", timeout, 50),
      called("acme", "2026-12-03T09:00:00Z", "tool.call", block, 1),
    ]);
    const { stdout } = await cli(["--tenant", "acme", "--from", file, "--since", "2026-12-03T08:00:00Z", "--json"]);
    expect(JSON.parse(stdout)).toMatchObject({ calls: 1, decisions: { block: 1 }, failures: {} });
    const aged = await cli(["--tenant", "acme", "--from", file, "--since", "100000d", "--json"]);
    expect(JSON.parse(aged.stdout)).toMatchObject({ calls: 2 });
  });

  it("says which line is not a trace line, and refuses a bad --since or a file that is not one", async () => {
    const bad = await traceFile("bad.jsonl", [called("acme", "2026-12-03T07:00:00Z", "tool.call", noop, 1), "{oops"]);
    const notJson = await cli(["--tenant", "acme", "--from", bad]);
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toContain("line 2 is not JSON");
    const odd = await traceFile("odd.jsonl", [{ type: "hook.called", at: "2026-12-03T07:00:00Z", tenantId: "acme" }]);
    expect((await cli(["--tenant", "acme", "--from", odd])).stderr).toMatch(
      /line 1 is a hook.called event stats cannot read at `record`/,
    );
    const since = await cli(["--tenant", "acme", "--from", bad, "--since", "yesterday"]);
    expect(since.code).toBe(2);
    expect(since.stderr).toContain("Expected --since to be an ISO time");
    expect((await cli(["--tenant", "acme", "--from", "."])).stderr).toContain("is not a regular file");
    expect((await cli(["--from", bad])).code).toBe(2);
  });

  it("reads the store's decision log when no --from is given", async () => {
    const path = join(dir, "store.db");
    const store = await SqliteBundleStore.open(path, { create: true });
    const row = (at: number, point: "tool.call" | "tool.result", record: object) => ({
      tenantId: TenantId.parse("acme"),
      at,
      runId: "run-1",
      turn: 1,
      point,
      version: 1,
      hash: `sha256-${"a".repeat(64)}`,
      event: "{}",
      eventChars: 2,
      truncated: false,
      ctx: "{}",
      record: JSON.stringify({ point, ...record }),
      shadow: null,
    });
    const now = Date.now();
    await store.appendDecisions([
      row(now - 7_200_000, "tool.call", { outcome: block, cpuMs: 1, runMs: 1 }),
      row(now, "tool.call", { outcome: timeout, cpuMs: 50, runMs: 50, queuedMs: 2 }),
      row(now, "tool.result", { outcome: noop, cpuMs: 2, runMs: 3, loadMs: 4 }),
    ]);
    await store.close();
    const all = await cli(["--tenant", "acme", "--json"], { ISOHOOK_STORE: path });
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toMatchObject({
      from: null,
      calls: 3,
      decisions: { block: 1, noop: 1 },
      failures: { timeout: 1 },
      points: [
        { point: "tool.call", calls: 2, runMs: { p50: 1, p99: 50 } },
        { point: "tool.result", calls: 1, waitedMs: { p50: 7, p99: 7 } },
      ],
    });
    const recent = await cli(["--tenant", "acme", "--since", "1h", "--store", path]);
    expect(recent.stdout).toContain("acme: 2 hook calls in the decision log since");
    expect(recent.stdout).toContain("failures   timeout 1");
    const both = await cli(["--tenant", "acme", "--from", "x.jsonl", "--store", path]);
    expect(both.code).toBe(2);
  });
});
