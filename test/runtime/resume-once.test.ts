import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { declaredTool, type ScriptedTurnInput, scriptedModel } from "../../src/agent/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import { type HookExecutor, TenantId } from "../../src/protocol/index.js";
import {
  type Checkpoint,
  type CheckpointBody,
  createHookRuntime,
  type HookRuntime,
  openCheckpoint,
  RuntimeError,
} from "../../src/runtime/index.js";
import {
  type BundleStore,
  MemoryBundleStore,
  PostgresBundleStore,
  SqliteBundleStore,
  StoreError,
} from "../../src/store/index.js";
import { dropSchema, freshSchema, pgUrl, postgresAvailable } from "../store/helpers/postgres.js";

const acme = TenantId.parse("acme");
const KEY = "k".repeat(32);
const shell = declaredTool({
  name: "shell",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  result: "$ {command}",
});
const TURNS: ScriptedTurnInput[] = [
  { toolCalls: [{ name: "shell", args: { command: "git push origin main" } }] },
  { text: "done" },
];
const ROOMY = { limits: { timeoutMs: 250 }, dispatch: { budgets: { turnMs: 5_000, runMs: 30_000 } } };
const DAY = 24 * 3_600_000;

let executor: HookExecutor;
let built: Awaited<ReturnType<typeof buildBundle>>;

beforeAll(async () => {
  executor = await createHookExecutor({ workers: 1, spareWorker: false, limits: ROOMY.limits });
  built = await buildBundle("hooks/ask-before-push", { executor });
});
afterAll(async () => {
  await executor?.close();
});

function runtimeOn(store: BundleStore, more: Parameters<typeof createHookRuntime>[0] = {}): Promise<HookRuntime> {
  return createHookRuntime({ executor, store, checkpointKey: KEY, decisionLog: false, ...ROOMY, ...more });
}

async function paused(rt: HookRuntime, ttl?: number): Promise<Checkpoint> {
  const result = await rt.runAgent({
    tenantId: "acme",
    input: "ship it",
    tools: [shell],
    model: scriptedModel(TURNS),
    ...(ttl !== undefined ? { checkpointTtlMs: ttl } : {}),
  });
  expect(result.stopReason).toBe("approval");
  if (result.checkpoint === undefined) throw new Error("no checkpoint");
  return result.checkpoint;
}

function resume(rt: HookRuntime, checkpoint: Checkpoint) {
  return rt.resumeAgent(checkpoint, {
    tenantId: "acme",
    decisions: { call_1_1: { type: "approve" } },
    tools: [shell],
    model: scriptedModel(TURNS, { start: 1 }),
  });
}

async function refusal(promise: Promise<unknown>): Promise<RuntimeError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RuntimeError);
  return error as RuntimeError;
}

/** Re-seals a changed body with the key, as the platform that holds it could. */
function resealed(checkpoint: Checkpoint, change: (body: CheckpointBody) => void): Checkpoint {
  const body: CheckpointBody = JSON.parse(checkpoint.body);
  change(body);
  const text = JSON.stringify(body);
  const mac = createHmac("sha256", KEY).update("isohook.checkpoint\n1\n").update(text).digest("base64url");
  return { ...checkpoint, body: text, mac };
}

/** Two handles on one store: what two hosts (or two processes on one SQLite file) hold. */
const shared: [string, () => Promise<{ a: BundleStore; b: BundleStore; cleanup: () => Promise<void> }>][] = [
  [
    "sqlite",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "isohook-resume-"));
      const a = await SqliteBundleStore.open(join(dir, "store.db"));
      const b = await SqliteBundleStore.open(join(dir, "store.db"));
      return { a, b, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  ],
];
if (await postgresAvailable()) {
  shared.push([
    "postgres",
    async () => {
      const schema = freshSchema();
      const a = await PostgresBundleStore.open(pgUrl(schema));
      const b = await PostgresBundleStore.open(pgUrl(schema));
      return { a, b, cleanup: () => dropSchema(schema) };
    },
  ]);
}

describe.each(shared)("resume once on a shared store (%s)", (_name, open) => {
  it("resumes a checkpoint on one host and refuses it on another, however the two race", async () => {
    const { a, b, cleanup } = await open();
    await a.upload({ tenantId: acme, ...built, by: "test", activate: true });
    const hostA = await runtimeOn(a);
    const hostB = await runtimeOn(b);
    try {
      const first = await paused(hostA);
      expect((await resume(hostA, first)).stopReason).toBe("completed");
      expect((await refusal(resume(hostB, first))).code).toBe("checkpoint_replayed");
      expect((await refusal(resume(hostA, first))).code).toBe("checkpoint_replayed");

      // Both hosts at once: one run goes on, the other is refused before anything of it runs.
      const second = await paused(hostB);
      const settled = await Promise.allSettled([resume(hostA, second), resume(hostB, second)]);
      const done = settled.filter((s) => s.status === "fulfilled");
      const refused = settled.flatMap((s) => (s.status === "rejected" ? [s.reason] : []));
      expect(done).toHaveLength(1);
      expect(refused.map((e: RuntimeError) => e.code)).toEqual(["checkpoint_replayed"]);
    } finally {
      await hostA.close();
      await hostB.close();
      await a.close();
      await b.close();
      await cleanup();
    }
  });
});

describe("checkpoint expiry", () => {
  it("seals an expiry (7 days by default, or the run's or runtime's TTL) and refuses an expired checkpoint", async () => {
    const store = new MemoryBundleStore();
    await store.upload({ tenantId: acme, ...built, by: "test", activate: true });
    const plain = await runtimeOn(store);
    const rt = await runtimeOn(store, { checkpointTtlMs: 3_600_000 });
    try {
      const byDefault = openCheckpoint(await paused(plain), KEY);
      expect(Date.parse(byDefault.expiresAt ?? "") - Date.parse(byDefault.createdAt)).toBe(7 * DAY);
      const ofRuntime = openCheckpoint(await paused(rt), KEY);
      expect(Date.parse(ofRuntime.expiresAt ?? "") - Date.parse(ofRuntime.createdAt)).toBe(3_600_000);
      const checkpoint = await paused(rt, 60_000);
      const body = openCheckpoint(checkpoint, KEY);
      expect(Date.parse(body.expiresAt ?? "") - Date.parse(body.createdAt)).toBe(60_000);

      const expired = resealed(checkpoint, (b) => {
        b.expiresAt = new Date(Date.now() - 1).toISOString();
      });
      const refused = await refusal(resume(rt, expired));
      expect(refused.code).toBe("checkpoint_expired");
      expect(refused.message).toMatch(/expired at .*start the run again/);
      // A body without an expiry (sealed by an older isohook) expires 7 days after it was made.
      const old = resealed(checkpoint, (b) => {
        delete b.expiresAt;
        b.createdAt = new Date(Date.now() - 7 * DAY - 1_000).toISOString();
      });
      expect((await refusal(resume(rt, old))).code).toBe("checkpoint_expired");
      // The refusals marked nothing: the checkpoint itself still resumes, once.
      expect((await resume(rt, checkpoint)).stopReason).toBe("completed");
      expect((await refusal(resume(rt, checkpoint))).code).toBe("checkpoint_replayed");
    } finally {
      await plain.close();
      await rt.close();
    }
  });

  it("refuses a TTL that is not whole milliseconds from a second to a year", async () => {
    const store = new MemoryBundleStore();
    for (const bad of [0, 999, 1.5, 366 * DAY, "7d"]) {
      const error = await refusal(runtimeOn(store, { checkpointTtlMs: bad as number }));
      expect(error.code).toBe("invalid_options");
      expect(error.message).toMatch(/checkpointTtlMs/);
    }
    const rt = await runtimeOn(store);
    try {
      const error = await refusal(
        rt.runAgent({ tenantId: "acme", input: "x", model: scriptedModel(TURNS), checkpointTtlMs: -1 }),
      );
      expect(error.code).toBe("invalid_options");
    } finally {
      await rt.close();
    }
  });

  it("refuses a resume while the ledger cannot record it, and lets it through once the ledger answers", async () => {
    const store = new MemoryBundleStore();
    await store.upload({ tenantId: acme, ...built, by: "test", activate: true });
    let down = true;
    const claimed: string[] = [];
    const checkpoints = {
      claim: async (claim: { id: string }) => {
        if (down) throw new StoreError("unavailable", "Cannot reach the store");
        claimed.push(claim.id);
        return true;
      },
    };
    const rt = await createHookRuntime({ executor, bundles: store, checkpoints, checkpointKey: KEY, ...ROOMY });
    try {
      const checkpoint = await paused(rt);
      const error = await resume(rt, checkpoint).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).code).toBe("unavailable");
      down = false;
      expect((await resume(rt, checkpoint)).stopReason).toBe("completed");
      expect(claimed).toEqual([JSON.parse(checkpoint.body).id]);
    } finally {
      await rt.close();
    }
  });
});
