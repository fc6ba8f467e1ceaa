import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { declaredTool, type ScriptedTurnInput, scriptedModel } from "../../src/agent/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import { type HookExecutor, TenantId } from "../../src/protocol/index.js";
import {
  type Checkpoint,
  type CheckpointBody,
  type CheckpointKey,
  createHookRuntime,
  type HookRuntime,
  openCheckpoint,
  type RunAgentResult,
  type RunEvent,
  RuntimeError,
} from "../../src/runtime/index.js";
import { MemoryBundleStore } from "../../src/store/index.js";

const acme = TenantId.parse("acme");
const KEY = "k".repeat(32);
const shell = declaredTool({
  name: "shell",
  parameters: {
    type: "object",
    properties: { command: { type: "string" } },
    required: ["command"],
    additionalProperties: false,
  },
  result: "$ {command}",
});
const push = (command = "git push origin main") => ({ name: "shell", args: { command } });
const TURNS: ScriptedTurnInput[] = [
  { toolCalls: [push("npm test"), push()] },
  { toolCalls: [push()] },
  { text: "pushed twice" },
];
const ROOMY = { limits: { timeoutMs: 250 }, dispatch: { budgets: { turnMs: 5_000, runMs: 30_000 } } };

let executor: HookExecutor;
let store: MemoryBundleStore;

async function runtime(options: { key?: CheckpointKey } = {}): Promise<HookRuntime> {
  return createHookRuntime({
    executor,
    store,
    ...ROOMY,
    ...(options.key !== undefined ? { checkpointKey: options.key } : {}),
  });
}

async function pausedRun(rt: HookRuntime, turns = TURNS): Promise<RunAgentResult & { checkpoint: Checkpoint }> {
  const result = await rt.runAgent({ tenantId: "acme", input: "ship it", tools: [shell], model: scriptedModel(turns) });
  expect(result.stopReason).toBe("approval");
  if (result.checkpoint === undefined) throw new Error("no checkpoint");
  return result as RunAgentResult & { checkpoint: Checkpoint };
}

/** A checkpoint with one field of its body changed (the MAC left as it was). */
function forged(checkpoint: Checkpoint, change: (body: CheckpointBody) => void): Checkpoint {
  const body: CheckpointBody = JSON.parse(checkpoint.body);
  change(body);
  return { ...checkpoint, body: JSON.stringify(body) };
}

function pendingOf(body: CheckpointBody) {
  const pending = body.loop.batch.pending[0];
  if (pending === undefined) throw new Error("no pending call");
  return pending;
}

async function refusal(promise: Promise<unknown>): Promise<RuntimeError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RuntimeError);
  return error as RuntimeError;
}

beforeAll(async () => {
  executor = await createHookExecutor({ workers: 1, spareWorker: false, limits: ROOMY.limits });
  store = new MemoryBundleStore();
  const built = await buildBundle("hooks/ask-before-push", { executor });
  await store.upload({ tenantId: acme, ...built, by: "test", activate: true });
});
afterAll(async () => {
  await executor?.close();
});

describe("checkpoints", () => {
  it("pauses at an ask, and a second runtime resumes the JSON checkpoint on the same bundle version", async () => {
    const first = await runtime({ key: KEY });
    const paused = await pausedRun(first);
    await first.close();
    expect(paused.pending).toMatchObject([
      { callId: "call_1_2", args: { command: "git push origin main" }, reason: "git push to main needs a human" },
    ]);
    expect(paused.pending?.[0]?.by).toEqual({ hookId: "tenant:acme@v1", source: "tenant" });
    const stored: Checkpoint = JSON.parse(JSON.stringify(paused.checkpoint));

    // Another version becomes active meanwhile: the resumed run keeps v1.
    const other = await buildBundle("hooks/block-destructive-shell", { executor });
    await store.upload({ tenantId: acme, ...other, by: "test", activate: true });
    const second = await runtime({ key: KEY });
    const events: RunEvent[] = [];
    const again = await second.resumeAgent(stored, {
      tenantId: "acme",
      decisions: { call_1_2: { type: "approve" } },
      tools: [shell],
      model: scriptedModel(TURNS, { start: JSON.parse(stored.body).loop.modelCalls }),
      onEvent: (e) => events.push(e),
    });
    expect(events[0]).toMatchObject({
      type: "run.started",
      runId: paused.runId,
      bundle: { version: 1 },
      resumed: true,
    });
    expect(again.runId).toBe(paused.runId);
    expect(again.transcript.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      "$ npm test",
      "$ git push origin main",
    ]);
    // Turn 2 pushes again: asked again, and the hook's ctx.state came through the checkpoint.
    expect(again.stopReason).toBe("approval");
    const body = openCheckpoint(again.checkpoint, KEY);
    expect(body.hooks.states["tenant:acme@v1"]).toEqual({ asked: 2 });
    expect(body.loop.turn).toBe(2);
    expect(body.bundle).toEqual({ version: 1, hash: paused.bundle?.hash });
    await second.close();
    await store.activate({ tenantId: acme, version: 1, by: "test" });
  });

  it("keeps a shadow candidate's ctx.state in the checkpoint: the resumed run's shadow goes on from it", async () => {
    const candidate = await buildBundle("test/fixtures/shadow/blocks", { executor });
    const { version } = (await store.upload({ tenantId: acme, ...candidate, by: "test", activate: false })).version;
    await store.shadow({ tenantId: acme, version, by: "test" });
    try {
      const first = await runtime({ key: KEY });
      const shadowReasons: string[] = [];
      const reasonsOf = (e: RunEvent) => {
        if (e.type !== "hook.shadowed") return;
        const { outcome } = e.shadow;
        shadowReasons.push(
          outcome.type === "decided" ? String((outcome.result as { reason?: string }).reason) : "failed",
        );
      };
      const paused = await first.runAgent({
        tenantId: "acme",
        input: "ship it",
        tools: [shell],
        model: scriptedModel(TURNS),
        onEvent: reasonsOf,
      });
      await first.close();
      expect(paused.stopReason).toBe("approval");
      if (paused.checkpoint === undefined) throw new Error("no checkpoint");
      expect(shadowReasons).toEqual(["candidate blocks call 1", "candidate blocks call 2"]);
      const sealed = openCheckpoint(paused.checkpoint, KEY);
      expect(sealed.hooks.states[`tenant:acme@v${version}`]).toEqual({ n: 2 });
      expect(sealed.hooks.states["tenant:acme@v1"]).toEqual({ asked: 1 });

      const second = await runtime({ key: KEY });
      await second.resumeAgent(paused.checkpoint, {
        tenantId: "acme",
        decisions: { call_1_2: { type: "approve" } },
        tools: [shell],
        model: scriptedModel(TURNS, { start: sealed.loop.modelCalls }),
        onEvent: reasonsOf,
      });
      await second.close();
      // Turn 2's push is the candidate's third call, not a first one from `{}`.
      expect(shadowReasons.slice(2)).toEqual(["candidate blocks call 3"]);
    } finally {
      await store.shadow({ tenantId: acme, version: null, by: "test" });
    }
  });

  it("answers asks in-process with approve, without a key or checkpoint", async () => {
    const rt = await runtime();
    const asked: string[] = [];
    const result = await rt.runAgent({
      tenantId: "acme",
      input: "ship it",
      tools: [shell],
      model: scriptedModel(TURNS),
      approve: (pending) => {
        asked.push(...pending.map((p) => p.callId));
        return Object.fromEntries(pending.map((p) => [p.callId, { type: "reject", reason: "not today" }] as const));
      },
    });
    await rt.close();
    expect(asked).toEqual(["call_1_2", "call_2_1"]);
    expect(result.stopReason).toBe("completed");
    expect(result.checkpoint).toBeUndefined();
    expect(result.transcript.filter((m) => m.content.startsWith("rejected:"))).toHaveLength(2);
  });

  it("makes producing or resuming a checkpoint without a key a usage error, and refuses short keys", async () => {
    const rt = await runtime();
    const error = await refusal(
      rt.runAgent({ tenantId: "acme", input: "ship it", tools: [shell], model: scriptedModel(TURNS) }),
    );
    expect(error.code).toBe("no_checkpoint_key");
    const withKey = await runtime({ key: KEY });
    const { checkpoint } = await pausedRun(withKey);
    await withKey.close();
    const resume = await refusal(
      rt.resumeAgent(checkpoint, { tenantId: "acme", decisions: { call_1_2: { type: "approve" } }, tools: [shell] }),
    );
    expect(resume.code).toBe("no_checkpoint_key");
    await rt.close();
    expect((await refusal(runtime({ key: "short" }))).code).toBe("invalid_options");
  });

  it("rotates keys: the first of a list seals, any opens, so runs paused under the old key still resume", async () => {
    const NEW = "n".repeat(32);
    const before = await runtime({ key: KEY });
    const old = await pausedRun(before);
    await before.close();
    const rotating = await runtime({ key: [NEW, KEY] });
    const resumed = await rotating.resumeAgent(old.checkpoint, {
      tenantId: "acme",
      decisions: { call_1_2: { type: "approve" } },
      tools: [shell],
      model: scriptedModel(TURNS, { start: JSON.parse(old.checkpoint.body).loop.modelCalls }),
    });
    // Paused again on turn 2: sealed with the new key only.
    expect(resumed.stopReason).toBe("approval");
    const resealed = resumed.checkpoint as Checkpoint;
    expect(openCheckpoint(resealed, NEW).runId).toBe(old.runId);
    expect(() => openCheckpoint(resealed, KEY)).toThrow(expect.objectContaining({ code: "checkpoint_tampered" }));
    // Once the old key is dropped, what it sealed is refused.
    expect(() => openCheckpoint(old.checkpoint, NEW)).toThrow(expect.objectContaining({ code: "checkpoint_tampered" }));
    await rotating.close();
    for (const bad of [[], [NEW, "short"], Array.from({ length: 9 }, () => NEW)] as CheckpointKey[]) {
      expect((await refusal(runtime({ key: bad }))).code).toBe("invalid_options");
    }
  });

  it("refuses a tampered, truncated, foreign-key, wrong-version or foreign-tenant checkpoint before anything runs", async () => {
    const rt = await runtime({ key: KEY });
    const { checkpoint } = await pausedRun(rt);
    const decisions = { call_1_2: { type: "approve" } } as const;
    const ran: string[] = [];
    const resume = (cp: unknown, extra: { tenantId?: string; checkpointKey?: string } = {}) =>
      refusal(
        rt.resumeAgent(cp as Checkpoint, {
          tenantId: "acme",
          decisions,
          tools: [shell],
          model: scriptedModel(TURNS, { start: 1 }),
          onEvent: (e) => {
            if (e.type === "tool.finished") ran.push(e.call.id);
          },
          ...extra,
        }),
      );
    const cases: [unknown, string][] = [
      [forged(checkpoint, (b) => (b.hooks.states["tenant:acme@v1"] = { asked: 0 })), "checkpoint_tampered"],
      [
        forged(checkpoint, (b) =>
          b.loop.batch.pending.splice(0, 1, { ...pendingOf(b), args: { command: "rm -rf /" } }),
        ),
        "checkpoint_tampered",
      ],
      [forged(checkpoint, (b) => (b.bundle = b.bundle && { ...b.bundle, version: 2 })), "checkpoint_tampered"],
      [forged(checkpoint, (b) => (b.hooks.spent = { turnMs: 0, runMs: 0 })), "checkpoint_tampered"],
      [{ ...checkpoint, body: checkpoint.body.slice(0, -10) }, "checkpoint_tampered"],
      [{ ...checkpoint, mac: checkpoint.mac.slice(0, 20) }, "checkpoint_tampered"],
      [{ ...checkpoint, version: 2 }, "checkpoint_version"],
      [{ ...checkpoint, type: "other" }, "invalid_checkpoint"],
      ["not a checkpoint", "invalid_checkpoint"],
    ];
    for (const [cp, code] of cases) expect((await resume(cp)).code).toBe(code);
    expect((await resume(checkpoint, { checkpointKey: "another key of 32 bytes, exactly" })).code).toBe(
      "checkpoint_tampered",
    );
    // Another tenant replaying acme's checkpoint (sealed by the same platform key) is refused too.
    expect((await resume(checkpoint, { tenantId: "globex" })).code).toBe("checkpoint_foreign");
    expect(ran).toEqual([]);
    await rt.close();
  });

  it("resumes a checkpoint once per runtime, and checks every decision first", async () => {
    const rt = await runtime({ key: KEY });
    const { checkpoint } = await pausedRun(rt, [{ toolCalls: [push()] }, { text: "done" }]);
    const resume = (decisions: Record<string, unknown>) =>
      rt.resumeAgent(checkpoint, {
        tenantId: "acme",
        decisions: decisions as never,
        tools: [shell],
        model: scriptedModel([{ toolCalls: [push()] }, { text: "done" }], { start: 1 }),
      });
    expect((await refusal(resume({}))).code).toBe("invalid_decision");
    expect((await refusal(resume({ call_1_1: { type: "approve" }, nope: { type: "approve" } }))).code).toBe(
      "invalid_decision",
    );
    const offSchema = await refusal(resume({ call_1_1: { type: "edit", args: { command: 42 } } }));
    expect(offSchema).toMatchObject({ code: "invalid_decision" });
    expect(offSchema.message).toMatch(/do not fit the schema of `shell`/);
    const done = await resume({ call_1_1: { type: "approve" } });
    expect(done.stopReason).toBe("completed");
    expect((await refusal(resume({ call_1_1: { type: "approve" } }))).code).toBe("checkpoint_replayed");
    await rt.close();
  });

  it("never lets an edit launder a block: edited args go through tool.call again", async () => {
    const rt = await runtime({ key: KEY });
    rt.registerPlatformHooks({
      id: "platform:no-force",
      position: "last",
      hooks: {
        toolCall: (e) =>
          String(e.call.args.command).includes("--force") ? { type: "block", reason: "no force pushes" } : undefined,
      },
    });
    const turns = [{ toolCalls: [push()] }, { text: "done" }];
    const { checkpoint } = await pausedRun(rt, turns);
    const result = await rt.resumeAgent(checkpoint, {
      tenantId: "acme",
      decisions: { call_1_1: { type: "edit", args: { command: "git push --force origin main" } } },
      tools: [shell],
      model: scriptedModel(turns, { start: 1 }),
    });
    expect(result.transcript.find((m) => m.role === "tool")).toMatchObject({ content: "blocked: no force pushes" });
    await rt.close();
  });

  it("refuses to resume on another bundle when the checkpoint's version is gone", async () => {
    const initech = TenantId.parse("initech");
    const asker = await buildBundle("hooks/ask-before-push", { executor });
    await store.upload({ tenantId: initech, ...asker, by: "test", activate: true });
    const rt = await runtime({ key: KEY });
    const paused = await rt.runAgent({ tenantId: "initech", input: "go", tools: [shell], model: scriptedModel(TURNS) });
    if (paused.checkpoint === undefined) throw new Error("no checkpoint");
    const other = await buildBundle("hooks/block-destructive-shell", { executor });
    await store.upload({ tenantId: initech, ...other, by: "test", activate: true });
    await store.deleteVersion({ tenantId: initech, version: 1, by: "test" });
    const resume = () =>
      rt.resumeAgent(paused.checkpoint as Checkpoint, {
        tenantId: "initech",
        decisions: { call_1_2: { type: "approve" } },
        tools: [shell],
        model: scriptedModel(TURNS, { start: 1 }),
      });
    const error = await refusal(resume());
    expect(error.code).toBe("checkpoint_bundle");
    expect(error.message).toMatch(/version 1 of tenant initech/);
    // Refused before it ran: the same checkpoint is not marked as resumed.
    expect((await refusal(resume())).code).toBe("checkpoint_bundle");
    await rt.close();
  });
});
