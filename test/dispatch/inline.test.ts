import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInlineExecutor } from "../../sandbox/worker/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import { createDispatcher, type DispatchEvent } from "../../src/dispatch/index.js";
import { type ActiveBundle, type HookExecutor, RunId, TenantId } from "../../src/protocol/index.js";

const TENANT = TenantId.parse("acme");

const POLICY = `
import { defineHooks } from "isohook/hook-sdk";
export default defineHooks({
  toolCall(event, ctx) {
    const calls = Number(ctx.state.calls ?? 0) + 1;
    ctx.state.calls = calls;
    console.log("call", calls, "turn", ctx.turn);
    if (String(event.call.args.command ?? "").includes("rm -rf")) return { type: "block", reason: "destructive" };
    if (event.call.args.spin === true) { for (;;) {} }
    if (calls > Number((ctx.config as { maxCalls: number }).maxCalls)) return { type: "block", reason: "too many calls" };
    return { type: "rewrite", args: { ...event.call.args, cwd: "/sandbox" } };
  },
});
`;

describe("dispatch through the inline sandbox", () => {
  let dir: string;
  let executor: HookExecutor;
  let bundle: ActiveBundle;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "isohook-dispatch-"));
    await writeFile(join(dir, "index.ts"), POLICY);
    executor = createInlineExecutor({ quiet: true, limits: { timeoutMs: 20 } });
    const built = await buildBundle(dir, { executor });
    bundle = { tenantId: TENANT, version: 7, code: built.code, manifest: built.manifest, config: { maxCalls: 3 } };
  });

  afterAll(async () => {
    await executor?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const event = (args: Record<string, unknown>) => ({
    call: { id: "c1", name: "shell", args: args as Record<string, never> },
    batch: { index: 0, size: 1 },
  });

  it("stacks a platform last hook over the real tenant bundle, with state, config and provenance", async () => {
    expect(bundle.manifest.hookPoints).toEqual(["tool.call"]);
    const events: DispatchEvent[] = [];
    const dispatcher = createDispatcher({ executor, limits: { timeoutMs: 20 }, emit: (e) => events.push(e) });
    const seen: unknown[] = [];
    dispatcher.registerPlatformHooks({
      id: "platform:audit",
      position: "last",
      hooks: { toolCall: (e) => void seen.push(e.call.args) },
    });
    const run = dispatcher.openRun({ tenantId: TENANT, runId: RunId.parse("r1"), bundle });
    run.beginTurn(1);
    const first = await run.dispatch("tool.call", event({ command: "ls" }));
    expect(first.decision).toEqual({ type: "execute", args: { command: "ls", cwd: "/sandbox" }, rewritten: true });
    expect(seen).toEqual([{ command: "ls", cwd: "/sandbox" }]);
    expect(first.records[0]?.logs).toEqual(["call 1 turn 1"]);

    const blocked = await run.dispatch("tool.call", event({ command: "rm -rf /" }));
    expect(blocked.decision).toMatchObject({ type: "block", reason: "destructive", by: { hookId: "tenant:acme@v7" } });

    await run.dispatch("tool.call", event({ command: "ls" }));
    const fourth = await run.dispatch("tool.call", event({ command: "ls" }));
    expect(fourth.decision).toMatchObject({ type: "block", reason: "too many calls" });
    expect(events.filter((e) => e.type === "hook.called" && e.record.source === "tenant")).toHaveLength(4);
    expect(events[0]).toMatchObject({
      record: {
        bundle: { version: 7, hash: bundle.manifest.hash },
        outcome: { type: "decided", result: { type: "rewrite" } },
      },
    });
  });

  it("contains an infinite loop as timeout, blocks under closed and quarantines the bundle", async () => {
    const dispatcher = createDispatcher({ executor, limits: { timeoutMs: 20 }, quarantine: { failures: 2 } });
    const run = dispatcher.openRun({ tenantId: TENANT, runId: RunId.parse("r2"), bundle });
    const spun = await run.dispatch("tool.call", event({ spin: true }));
    expect(spun.decision).toMatchObject({ type: "block", reason: "timeout", by: { failure: "timeout" } });
    // A call the loaded machine starved short of its CPU time strikes nothing: spin until the second strike.
    for (let i = 0; i < 10 && (dispatcher.quarantinedUntil(TENANT, bundle.manifest.hash) ?? 0) <= Date.now(); i++) {
      expect((await run.dispatch("tool.call", event({ spin: true }))).decision).toMatchObject({
        type: "block",
        reason: "timeout",
      });
    }
    expect(dispatcher.quarantinedUntil(TENANT, bundle.manifest.hash)).toBeGreaterThan(Date.now());
    const after = await run.dispatch("tool.call", event({ command: "ls" }));
    expect(after.records[0]?.outcome).toMatchObject({ type: "failed", failure: { code: "quarantined" } });
  });

  it("stops calling the sandbox once the turn budget is spent by timeouts", async () => {
    // A spinning call is charged its run time: about 20 ms on a quiet machine; on a loaded one up to its
    // wall-clock backstop (at most 5 × 20 ms) and past it by however late the stop comes: at load 14-20 a
    // 300 ms budget fitted only one. 1 s fits two there; a quiet machine spends it in at most 50 calls.
    // Timeouts (5 failures), and the reloads after them (weighted strikes), would otherwise quarantine the
    // bundle first: keep quarantine out of the way of the budget under test.
    const dispatcher = createDispatcher({
      executor,
      limits: { timeoutMs: 20 },
      budgets: { turnMs: 1_000, runMs: 10_000 },
      quarantine: { failures: 1_000 },
    });
    const run = dispatcher.openRun({ tenantId: TENANT, runId: RunId.parse("r3"), bundle });
    const timeouts: number[] = [];
    let denied: Awaited<ReturnType<typeof run.dispatch<"tool.call">>> | undefined;
    for (let i = 0; i < 100 && denied === undefined; i++) {
      const spun = await run.dispatch("tool.call", event({ spin: true }));
      const outcome = spun.records[0]?.outcome;
      if (outcome?.type === "failed" && outcome.failure.message.includes("budget")) denied = spun;
      else timeouts.push(spun.records[0]?.runMs ?? 0);
    }
    expect(timeouts.length).toBeGreaterThanOrEqual(2);
    expect(denied?.records[0]).toMatchObject({ runMs: 0, outcome: { failure: { code: "timeout" } } });
    expect(denied?.decision).toMatchObject({ type: "block", reason: "timeout" });
    expect(run.spent().turnMs).toBeGreaterThanOrEqual(1_000);
  });
});
