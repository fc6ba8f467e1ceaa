import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import {
  compareDecisions,
  DecisionLog,
  type DecisionPair,
  formatComparison,
  outcomeOf,
  replayDecisions,
  replayRecordOf,
  shadowPairOf,
  viewOf,
} from "../../src/decisionlog/index.js";
import { createDispatcher } from "../../src/dispatch/index.js";
import { deployHook } from "../../src/gate/index.js";
import { DEFAULT_LIMITS, type HookExecutor, RunId, TenantId } from "../../src/protocol/index.js";
import { MemoryBundleStore } from "../../src/store/index.js";
import { toolCallFixture, writeHook } from "../gate/hook-modules.js";

const acme = TenantId.parse("acme");
const fuzz = { runs: 20, timeMs: 1_000, seed: 7 };
let root: string;
let executor: HookExecutor;

/** Counts calls in ctx.state and blocks from the third on; blocks rm -rf; `extra` adds a rule. */
const hook = (extra: string) => `
export default {
  toolCall(event, ctx) {
    ctx.state.calls = (Number(ctx.state.calls) || 0) + 1;
    const command = String(event.call.args.command ?? "");
    if (command.includes("rm -rf")) return { type: "block", reason: "destructive" };
    ${extra}
    if (ctx.state.calls > 2) return { type: "block", reason: "too many calls" };
  },
};
`;
const FIXTURES = [
  toolCallFixture("shell", { command: "rm -rf /" }, { type: "block", reason: "destructive" }),
  toolCallFixture("shell", { command: "ls" }, { noop: true }),
].join("\n");
const CURL_BLOCKED = 'if (command.startsWith("curl")) return { type: "block", reason: "no network: " + command };';
const CURL_THROWS = 'if (command.startsWith("curl")) throw new Error("cannot parse " + command);';

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "isohook-replay-"));
  executor = await createHookExecutor({ workers: 1, spareWorker: false, limits: { timeoutMs: 250 } });
});
afterAll(async () => {
  await executor?.close();
  rmSync(root, { recursive: true, force: true });
});

const call = (command: string) => ({
  call: { id: "c", name: "shell", args: { command } },
  batch: { index: 0, size: 1 },
});
const HOSTILE = "curl evil.example\u001b[2J\u202e";

/** v1 active, its log on, one run of three calls recorded: ls, curl (hostile text), ls (third call: blocked by state). */
async function recordedStore(): Promise<MemoryBundleStore> {
  const store = new MemoryBundleStore();
  const entry = writeHook(root, "v1", hook(""), FIXTURES);
  const v1 = await deployHook({ store, executor, entry, tenantId: acme, by: "ops", activate: true, fuzz });
  expect(v1.type).toBe("deployed");
  await store.setLogSettings({
    tenantId: acme,
    settings: { sample: 1, mask: [], retainDays: 1, retain: 100 },
    by: "ops",
  });
  const log = await DecisionLog.open(store);
  const dispatcher = createDispatcher({ executor, decisionLog: log, limits: { ...DEFAULT_LIMITS, timeoutMs: 250 } });
  const run = dispatcher.openRun({ tenantId: acme, runId: RunId.parse("run-1"), bundle: await store.active(acme) });
  const decided = [];
  for (const command of ["ls", HOSTILE, "ls"])
    decided.push((await run.dispatch("tool.call", call(command))).decision.type);
  expect(decided).toEqual(["execute", "execute", "block"]);
  await log.close();
  return store;
}

describe("replay", () => {
  it("runs recorded calls through a candidate with their recorded state and shows the one decision that changed", async () => {
    const store = await recordedStore();
    const entry = writeHook(root, "v2", hook(CURL_BLOCKED), FIXTURES);
    const result = await deployHook({
      store,
      executor,
      entry,
      tenantId: acme,
      by: "ops",
      fuzz,
      replay: { records: 10 },
    });
    expect(result.type).toBe("deployed");
    const replay = result.report.replay;
    // The third call agrees only because the recorded state (2 calls so far) went with it.
    expect(replay).toMatchObject({ compared: 3, agreed: 2, differed: 1, newFailures: 0 });
    expect(replay?.changes).toEqual([{ from: "noop", to: "block", count: 1 }]);
    expect(replay?.differences[0]?.event).toEqual(call(HOSTILE));
    expect(replay?.versions).toEqual({ baseline: [1], candidate: [2] });
    const text = formatComparison(replay ?? expect.unreachable(), { baseline: "recorded", candidate: "v2" }).join("\n");
    expect(text).toContain("noop → block × 1");
    expect([text.includes("\u001b"), text.includes("\u202e")]).toEqual([false, false]);
    expect(text).toContain("\\x1b[2J");
  });

  it("rejects the upload with --fail-on-diff, and a candidate that fails recorded calls, storing nothing", async () => {
    const store = await recordedStore();
    const v2 = writeHook(root, "v2-strict", hook(CURL_BLOCKED), FIXTURES);
    const strict = await deployHook({
      store,
      executor,
      entry: v2,
      tenantId: acme,
      by: "ops",
      fuzz,
      replay: { records: 10, failOnDiff: true },
    });
    expect(strict.type).toBe("rejected");
    expect(strict.report.reasons.map((r) => r.code)).toEqual(["replay_failed"]);
    const v3 = writeHook(root, "v3", hook(CURL_THROWS), FIXTURES);
    const broken = await deployHook({
      store,
      executor,
      entry: v3,
      tenantId: acme,
      by: "ops",
      fuzz,
      replay: { records: 10 },
    });
    expect(broken.type).toBe("rejected");
    expect(broken.report.replay).toMatchObject({ newFailures: 1, failures: { candidate: { threw: 1 } } });
    expect((await store.versions(acme)).map((v) => v.version)).toEqual([1]);
  });

  it("skips a truncated event and a call it cannot run again, counting them", async () => {
    const store = await recordedStore();
    const views = (await store.decisions({ tenantId: acme })).map(viewOf);
    const records = views.map(replayRecordOf);
    const first = records[0] ?? expect.unreachable();
    const candidate = await store.active(acme);
    const report = await replayDecisions({
      executor,
      candidate: candidate ?? expect.unreachable(),
      records: [{ ...first, event: null }, { ...first, baseline: null }, first],
      limits: { ...DEFAULT_LIMITS, timeoutMs: 250 },
    });
    expect(report).toMatchObject({
      compared: 1,
      agreed: 1,
      skipped: { truncated: 1, "without a recorded decision": 1 },
    });
  });
});

describe("shadowPairOf", () => {
  it("pairs a stored record with its shadow record, each side with its version and cost", () => {
    const record = { bundle: { version: 3 }, outcome: { type: "decided", result: null }, runMs: 1 };
    const shadow = { bundle: { version: 4 }, outcome: { type: "failed", failure: { code: "timeout" } }, runMs: 50 };
    const view = {
      ...{ id: 7, at: "", tenantId: "acme", runId: "r", turn: 1, point: "tool.call" as const, version: 3, hash: "" },
      ...{ event: { a: 1 }, eventText: null, eventChars: 7, truncated: false, ctx: {}, record, shadow },
    };
    const pair = shadowPairOf(view);
    expect(pair).toMatchObject({ id: 7, baseline: { version: 3, runMs: 1 }, candidate: { version: 4, runMs: 50 } });
    expect(compareDecisions(pair === undefined ? [] : [pair])).toMatchObject({ differed: 1, newFailures: 1 });
    expect(shadowPairOf({ ...view, shadow: null })).toBeUndefined();
  });
});

describe("compareDecisions", () => {
  const side = (result: unknown, runMs?: number, version = 1) => ({
    version,
    outcome: outcomeOf({
      outcome:
        result === "throw"
          ? { type: "failed", failure: { code: "threw" } }
          : { type: "decided", result: result as null },
    }),
    runMs,
  });
  const pair = (point: "tool.call" | "tool.result", a: unknown, b: unknown, n = 0): DecisionPair => ({
    point,
    runId: `r${n}`,
    turn: 0,
    event: { n },
    baseline: side(a, n),
    candidate: side(b, n * 2, 2),
  });

  it("clips a huge event to one short terminal line; the report keeps it exact", () => {
    const huge = {
      ...pair("tool.call", null, { type: "block", reason: "x" }, 1),
      event: { text: "y".repeat(1 << 20) },
    };
    const report = compareDecisions([huge]);
    const line = formatComparison(report, { baseline: "a", candidate: "b" }).find((l) => l.includes("event"));
    expect(line?.length).toBeLessThan(400);
    expect(line).toContain("…");
    expect(JSON.stringify(report.differences[0]?.event)).toHaveLength((1 << 20) + 11);
  });

  it("counts by point, by change and by failure code, with each side's cost, and keeps the first differences", () => {
    const block = { type: "block", reason: "x" };
    const pairs = [
      pair("tool.call", block, { reason: "x", type: "block" }, 1), // same result, keys in another order
      pair("tool.call", null, block, 2),
      pair("tool.call", null, block, 3),
      pair("tool.result", null, "throw", 4),
      pair("tool.result", "throw", "throw", 5),
      ...Array.from({ length: 8 }, (_, i) => pair("tool.call", block, null, 10 + i)),
    ];
    const report = compareDecisions(pairs);
    expect(report).toMatchObject({ compared: 13, agreed: 2, differed: 11, newFailures: 1 });
    expect(report.byPoint).toEqual({
      "tool.call": { compared: 11, agreed: 1, differed: 10 },
      "tool.result": { compared: 2, agreed: 1, differed: 1 },
    });
    expect(report.changes).toEqual([
      { from: "noop", to: "block", count: 2 },
      { from: "noop", to: "failed:threw", count: 1 },
      { from: "block", to: "noop", count: 8 },
    ]);
    expect(report.failures).toEqual({ baseline: { threw: 1 }, candidate: { threw: 2 } });
    expect(report.cost.baseline).toEqual({ calls: 13, p50: 11, p99: 17 });
    expect(report.cost.candidate).toEqual({ calls: 13, p50: 22, p99: 34 });
    expect(report.differences.map((d) => d.runId)).toEqual(["r2", "r3", "r4", "r10", "r11"]);
  });
});
