import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { declaredTool, scriptedModel } from "../../src/agent/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import { runCli } from "../../src/cli/index.js";
import type { HookExecutor } from "../../src/protocol/index.js";
import { TenantId } from "../../src/protocol/index.js";
import { createHookRuntime, RuntimeError } from "../../src/runtime/index.js";
import { MemoryBundleStore, SqliteBundleStore } from "../../src/store/index.js";
import { fakeIO } from "../cli/fake-io.js";

const acme = TenantId.parse("acme");
const shell = declaredTool({
  name: "shell",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  result: "ran {command}",
});
const ROOMY = { limits: { timeoutMs: 250 }, dispatch: { budgets: { turnMs: 5_000, runMs: 30_000 } } };
const ON = { sample: 1, mask: [], retainDays: 1, retain: 100 };
let executor: HookExecutor;
let store: MemoryBundleStore;

beforeAll(async () => {
  executor = await createHookExecutor({ workers: 1, spareWorker: false, limits: ROOMY.limits });
  store = new MemoryBundleStore();
  const built = await buildBundle("hooks/block-destructive-shell", { executor });
  await store.upload({ tenantId: acme, ...built, by: "test", activate: true });
});
afterAll(async () => {
  await executor?.close();
});

const run = (runtime: Awaited<ReturnType<typeof createHookRuntime>>, runId: string) =>
  runtime.runAgent({
    tenantId: "acme",
    runId,
    input: "clean up",
    tools: [shell],
    model: scriptedModel([{ toolCalls: [{ name: "shell", args: { command: "rm -rf /" } }] }, { text: "done" }]),
  });

describe("the runtime's decision log", () => {
  it("records a tenant once an operator switches its log on, and flushes on close", async () => {
    const runtime = await createHookRuntime({ executor, store, ...ROOMY, decisionLog: { refreshMs: 10 } });
    await run(runtime, "before");
    await store.setLogSettings({ tenantId: acme, settings: ON, by: "ops" });
    await runtime.decisionLog?.refresh();
    await run(runtime, "after");
    await runtime.close();
    const rows = await store.decisions({ tenantId: acme });
    expect(rows.map((r) => [r.runId, r.point, r.version])).toEqual([["after", "tool.call", 1]]);
    expect(JSON.parse(rows[0]?.record ?? "{}")).toMatchObject({ outcome: { result: { type: "block" } } });
    await store.setLogSettings({ tenantId: acme, settings: null, by: "ops" });
  });

  it("logs every tenant with `all`, and nothing with `decisionLog: false`", async () => {
    const all = await createHookRuntime({ executor, store, ...ROOMY, decisionLog: { all: { sample: 1 } } });
    await run(all, "all-1");
    await all.close();
    expect((await store.decisions({ tenantId: acme })).at(-1)?.runId).toBe("all-1");
    const off = await createHookRuntime({ executor, store, ...ROOMY, decisionLog: false });
    expect(off.decisionLog).toBeUndefined();
    await off.close();
  });

  it("refuses bad log options before anything starts", async () => {
    const error = await createHookRuntime({ store, decisionLog: { flushMs: -1 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeError);
    expect((error as Error).message).toMatch(/flushMs/);
  });
});

describe("isohook decisions", () => {
  it("shows a tenant's text escaped in the terminal and exact in --json", async () => {
    const dir = mkdtempSync(join(tmpdir(), "isohook-decisions-"));
    try {
      const path = join(dir, "store.db");
      const sqlite = await SqliteBundleStore.open(path);
      const reason = "ok\u001b]0;pwned\u0007\u202eevil\nFORGED LINE";
      const record = { outcome: { type: "decided", result: { type: "block", reason } }, runMs: 1, logs: [reason] };
      await sqlite.appendDecisions([
        {
          tenantId: acme,
          at: Date.now(),
          runId: "run\u001b[2J",
          turn: 0,
          point: "tool.call",
          version: 1,
          hash: `sha256-${"a".repeat(64)}`,
          event: JSON.stringify({
            call: { id: "c", name: "shell", args: { command: reason } },
            batch: { index: 0, size: 1 },
          }),
          eventChars: 10,
          truncated: false,
          ctx: "{}",
          record: JSON.stringify(record),
          shadow: null,
        },
      ]);
      await sqlite.close();
      const io = fakeIO(dir, { ISOHOOK_STORE: path });
      expect(await runCli(["decisions", "--tenant", "acme"], io)).toBe(0);
      const out = io.out();
      expect([out.includes("\u001b"), out.includes("\u202e"), out.includes("\u0007")]).toEqual([false, false, false]);
      expect(out.split("\n").some((line) => line.startsWith("FORGED"))).toBe(false);
      expect(out).toContain("\\x1b]0;pwned");
      const json = fakeIO(dir, { ISOHOOK_STORE: path });
      expect(await runCli(["decisions", "--tenant", "acme", "--json"], json)).toBe(0);
      const parsed = JSON.parse(json.out());
      expect(parsed.decisions[0].record.outcome.result.reason).toBe(reason);
      expect(json.out()).not.toContain("\u001b");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
