/**
 * Shadow mode in the real process sandbox: a hostile candidate (one that blocks everything, one that spins
 * to its timeout, one that takes its worker down) runs beside the active bundle and the run comes out the
 * same as without it, every active call decided, the candidate's outcomes recorded next to them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { declaredTool, scriptedModel } from "../../src/agent/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import type { HookRecord, HookShadowedEvent } from "../../src/dispatch/index.js";
import { type HookExecutor, TenantId } from "../../src/protocol/index.js";
import { createHookRuntime, type RunAgentResult, type RunEvent } from "../../src/runtime/index.js";
import { MemoryBundleStore } from "../../src/store/index.js";

const acme = TenantId.parse("acme");
const shell = declaredTool({
  name: "shell",
  parameters: {
    type: "object",
    properties: { command: { type: "string" }, cwd: { type: "string" } },
    required: ["command"],
    additionalProperties: false,
  },
  result: "ran {command}",
});
const LIMITS = { timeoutMs: 200 };
// Budgets roomy for the active hook on a busy machine; the spinning candidate spends its own turn budget.
const DISPATCH = { budgets: { turnMs: 1_000, runMs: 30_000 } };

let executor: HookExecutor;
let store: MemoryBundleStore;
const versions: Record<string, number> = {};

async function upload(entry: string, root?: string): Promise<number> {
  const built = await buildBundle(entry, { executor, ...(root === undefined ? {} : { root }) });
  return (await store.upload({ tenantId: acme, ...built, config: {}, by: "test" })).version.version;
}

async function scenario(runId: string): Promise<{ result: RunAgentResult; events: RunEvent[] }> {
  const runtime = await createHookRuntime({ executor, store, limits: LIMITS, dispatch: DISPATCH });
  const events: RunEvent[] = [];
  try {
    const result = await runtime.runAgent({
      tenantId: "acme",
      runId,
      input: "Clean up",
      tools: [shell],
      model: scriptedModel([
        { toolCalls: [{ name: "shell", args: { command: "rm -rf /" } }] },
        {
          toolCalls: [
            { name: "shell", args: { command: "ls" } },
            { name: "shell", args: { command: "du -sh" } },
          ],
        },
        { toolCalls: [{ name: "shell", args: { command: "echo done" } }] },
        { text: "Cleaned nothing." },
      ]),
      onEvent: (event) => events.push(event),
    });
    return { result, events };
  } finally {
    await runtime.close();
  }
}

/** What a run did, without times: its messages, stop reason, output and the active calls' outcomes. */
function behaviour({ result, events }: { result: RunAgentResult; events: RunEvent[] }) {
  const called = events.flatMap((e) => (e.type === "hook.called" ? [e.record] : []));
  return {
    stopReason: result.stopReason,
    output: result.output,
    turns: result.turns,
    bundle: result.bundle,
    transcript: result.transcript,
    decisions: called.map((r: HookRecord) => ({ hookId: r.hookId, outcome: r.outcome })),
  };
}

const shadowedOf = (events: RunEvent[]) => events.filter((e): e is HookShadowedEvent => e.type === "hook.shadowed");
const codeOf = (r: HookRecord) =>
  r.outcome.type === "failed"
    ? r.outcome.failure.code
    : r.outcome.type === "skipped"
      ? r.outcome.reason
      : r.outcome.result?.type;

beforeAll(async () => {
  executor = await createHookExecutor({ workers: 1, spareWorker: false, limits: LIMITS });
  store = new MemoryBundleStore();
  versions.active = await upload("hooks/block-destructive-shell");
  await store.activate({ tenantId: acme, version: versions.active, by: "test" });
  for (const name of ["blocks", "spins", "crashes"]) versions[name] = await upload(`test/fixtures/shadow/${name}`);
}, 60_000);
afterAll(async () => {
  await executor?.close();
});

describe("a hostile candidate in shadow mode", () => {
  let baseline: ReturnType<typeof behaviour>;

  beforeAll(async () => {
    baseline = behaviour(await scenario("run-shadow"));
    expect(baseline.stopReason).toBe("completed");
    expect(baseline.decisions.map((d) => d.outcome.type)).toEqual(["decided", "decided", "decided", "decided"]);
  }, 60_000);

  it.each([
    ["blocks", ["block", "block", "block", "block"]],
    // A spinner's timeouts burn its CPU limit, so they are the candidate's own strikes: after the first
    // ones its quarantine (its own, not the active bundle's) ends the later calls before they cross.
    ["spins", "timeouts, then quarantined"],
    ["crashes", undefined],
  ])(
    "never changes the run when the candidate %s",
    async (name, expected) => {
      await store.shadow({ tenantId: acme, version: versions[name] as number, by: "test" });
      try {
        const run = await scenario("run-shadow");
        expect(behaviour(run)).toEqual(baseline);
        const shadowed = shadowedOf(run.events);
        expect(shadowed).toHaveLength(4);
        expect(shadowed.every((e) => e.shadow.bundle?.version === versions[name])).toBe(true);
        expect(shadowed.map((e) => e.record?.outcome)).toEqual(baseline.decisions.map((d) => d.outcome));
        const codes = shadowed.map((e) => codeOf(e.shadow));
        if (Array.isArray(expected)) expect(codes).toEqual(expected);
        else if (expected !== undefined) {
          expect(codes[0]).toBe("timeout");
          const firstQuarantined = codes.indexOf("quarantined");
          const timeouts = firstQuarantined === -1 ? codes : codes.slice(0, firstQuarantined);
          expect(timeouts.every((c) => c === "timeout")).toBe(true);
          expect(codes.slice(timeouts.length).every((c) => c === "quarantined")).toBe(true);
        }
        // The worker died under the first call (sandbox_crashed on Node 20; killed at the deadline on 24),
        // and quarantine or the budget may end later calls: none of them decided anything.
        else
          expect(
            codes.every((c) => ["sandbox_crashed", "timeout", "memory_limit", "quarantined"].includes(String(c))),
          ).toBe(true);
        expect(run.events.find((e) => e.type === "run.started")).toMatchObject({
          bundle: { version: versions.active },
          shadow: { version: versions[name] },
        });
      } finally {
        await store.shadow({ tenantId: acme, version: null, by: "test" });
      }
    },
    60_000,
  );
});
