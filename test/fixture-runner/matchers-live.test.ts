/**
 * The fixture runner (and so `isohook test` and the deploy gate) and replay decide "is this handler called
 * for this event" as the live dispatcher does: a handler behind a tool matcher is not called for a tool no
 * glob selects, so a fixture expecting `block` for it fails instead of certifying a guard production skips.
 * Every example hook's fixtures run both ways, through the fixture runner and a live run, and agree.
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import { replayDecisions } from "../../src/decisionlog/replay.js";
import { createDispatcher } from "../../src/dispatch/index.js";
import { parseFixtures, runFixtures } from "../../src/fixture-runner/index.js";
import { runDeployGate } from "../../src/gate/index.js";
import { type HookExecutor, type HookPoint, handlerOf, Limits, RunId, TenantId } from "../../src/protocol/index.js";

const tenantId = TenantId.parse("acme");
let executor: HookExecutor;
let dir: string;
beforeAll(async () => {
  executor = await createHookExecutor({ workers: 1, spareWorker: false });
  dir = await mkdtemp(join(tmpdir(), "isohook-matchers-"));
});
afterAll(async () => {
  await executor.close();
  await rm(dir, { recursive: true, force: true });
});

const GIT_ONLY = `export default {
  toolCall: { tools: ["git_*"], handler: () => ({ type: "block", reason: "git is guarded" }) },
};
`;
const call = (name: string) => ({ call: { id: "c1", name, args: {} }, batch: { index: 0, size: 1 } });
const line = (name: string, expect: object) => JSON.stringify({ point: "tool.call", event: call(name), expect });

describe("a handler behind a tool matcher", () => {
  it("fails a fixture expecting block for a tool no glob selects, and passes it for one selected", async () => {
    await writeFile(join(dir, "index.ts"), GIT_ONLY);
    const bundle = await buildBundle(join(dir, "index.ts"), { executor, root: dir });
    const text = [line("shell", { type: "block" }), line("git_push", { type: "block" }), line("shell", { noop: true })];
    const reports = await runFixtures({ executor, bundle, tenantId, fixtures: parseFixtures(text.join("\n"), "f") });
    expect(reports.map((r) => [r.passed, r.skipped])).toEqual([
      [false, "no match"],
      [true, undefined],
      [true, "no match"],
    ]);
    expect(reports[0]?.mismatch).toContain("does not select `shell`");
  });

  it("makes the deploy gate reject such a fixture", async () => {
    await writeFile(join(dir, "index.ts"), GIT_ONLY);
    await writeFile(join(dir, "fixtures.jsonl"), `${line("shell", { type: "block" })}\n`);
    const result = await runDeployGate({ entry: dir, executor, tenantId });
    expect(result.type).toBe("rejected");
    expect(JSON.stringify(result.report)).toContain("does not select `shell`");
  });

  it("replays a call no glob selects as the candidate's no-op", async () => {
    await writeFile(join(dir, "index.ts"), GIT_ONLY);
    const built = await buildBundle(join(dir, "index.ts"), { executor, root: dir });
    const baseline = { version: 1, outcome: { key: "noop", result: null, failure: null }, runMs: 0 };
    const records = ["shell", "git_push"].map((name, i) => ({
      id: i + 1,
      point: "tool.call" as const,
      runId: "r1",
      turn: 0,
      event: call(name),
      ctx: { runId: "r1", turn: 0, state: {} },
      baseline,
    }));
    const report = await replayDecisions({
      executor,
      candidate: { tenantId, version: 2, code: built.code, manifest: built.manifest, config: {} },
      records,
      limits: Limits.parse({}),
    } as unknown as Parameters<typeof replayDecisions>[0]);
    expect(report.agreed).toBe(1);
    expect(report.changes).toEqual([{ from: "noop", to: "block", count: 1 }]);
  });
});

describe("every example hook's fixtures, through the fixture runner and a live run", async () => {
  const hooksDir = new URL("../../hooks/", import.meta.url).pathname;
  const names = [];
  for (const name of await readdir(hooksDir)) {
    if ((await stat(join(hooksDir, name, "fixtures.jsonl")).catch(() => undefined)) !== undefined) names.push(name);
  }

  it.each(names)("%s: called for the same events, with the same decisions", async (name) => {
    const folder = join(hooksDir, name);
    const bundle = await buildBundle(folder, { executor, root: hooksDir });
    const fixtures = parseFixtures(await readFile(join(folder, "fixtures.jsonl"), "utf8"), "fixtures.jsonl");
    const reports = await runFixtures({ executor, bundle, tenantId, fixtures });
    const dispatcher = createDispatcher({ executor });
    let compared = 0;
    try {
      for (const [i, fixture] of fixtures.entries()) {
        // A live run starts with empty state; an observe line leaves no decision to compare.
        if (fixture.observe || fixture.ctx?.state !== undefined) continue;
        const active = {
          tenantId,
          version: 1,
          code: bundle.code,
          manifest: bundle.manifest,
          config: fixture.ctx?.config ?? {},
        };
        const run = dispatcher.openRun({ tenantId, runId: RunId.parse(`live-${i}`), bundle: active });
        run.beginTurn(fixture.ctx?.turn ?? 0);
        const dispatched = await liveDispatch(run, fixture.point, fixture.event);
        const record = dispatched.records.find((r) => r.hookId.startsWith("tenant:"));
        const report = reports[i];
        const live = record === undefined ? "not exported" : record.outcome.type === "skipped" ? "no match" : "called";
        const fixtureSide =
          report?.skipped ?? (report?.mismatch?.includes("does not export") ? "not exported" : "called");
        expect(live, `line ${fixture.line}`).toBe(fixtureSide);
        if (record?.outcome.type === "decided" && report?.outcome.type === "decided") {
          expect(record.outcome.result ?? null, `line ${fixture.line}`).toEqual(report.outcome.result ?? null);
        }
        compared++;
      }
    } finally {
      await dispatcher.close();
    }
    expect(compared).toBeGreaterThan(0);
  });
});

/** The run's dispatch of `point` (its method is named as the point's handler). */
function liveDispatch(run: object, point: HookPoint, event: unknown) {
  const r = run as Record<string, unknown>;
  const method = (
    typeof r.dispatch === "function"
      ? (e: unknown) => (r.dispatch as (p: HookPoint, e: unknown) => unknown)(point, e)
      : (r[handlerOf(point)] as (e: unknown) => unknown).bind(run)
  ) as (e: unknown) => Promise<{ records: readonly { hookId: string; outcome: { type: string; result?: unknown } }[] }>;
  return method(event);
}
