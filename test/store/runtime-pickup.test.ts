import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import type { HookExecutor, TenantId } from "../../src/protocol/index.js";
import { createHookRuntime } from "../../src/runtime/index.js";
import { SqliteBundleStore } from "../../src/store/index.js";
import { GOOD_INDEX, writeHook } from "../gate/hook-modules.js";
import { destructiveRun } from "./helpers/agent-run.js";
import { runStoreChild } from "./helpers/files.js";

const acme = "acme" as TenantId;
let dir: string;
let executor: HookExecutor;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "isohook-pickup-"));
  executor = await createHookExecutor({ workers: 1, spareWorker: false });
});
afterAll(async () => {
  await executor?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ran: string[] = [];

describe("a running runtime serving from the SQLite store", () => {
  it("picks up an activation and a rollback made by another process, and each run keeps its version", async () => {
    const path = join(dir, "store.db");
    let now = 0;
    const store = await SqliteBundleStore.open(path, { refreshMs: 500, now: () => now });
    for (const [name, index] of [
      ["blocks", GOOD_INDEX],
      ["allows", "export default { toolCall() {} };\n"],
    ] as const) {
      const built = await buildBundle(writeHook(dir, name, index), { executor });
      await store.upload({ tenantId: acme, ...built, by: "ops", activate: name === "blocks" });
    }
    const runtime = await createHookRuntime({ store, executor });
    const run = () => destructiveRun(runtime, ran);

    const first = await run();
    expect(first.bundle?.version).toBe(1);
    expect(ran).toEqual([]);

    expect((await runStoreChild({ op: "activate", path, tenantId: "acme", version: 2 })).code).toBe(0);
    now += 500;
    const second = await run();
    expect(second.bundle?.version).toBe(2);
    expect(ran).toEqual(["rm -rf /"]);

    expect((await runStoreChild({ op: "rollback", path, tenantId: "acme" })).code).toBe(0);
    now += 500;
    expect((await run()).bundle?.version).toBe(1);
    expect(ran).toEqual(["rm -rf /"]);
    await runtime.close();
    await store.close();
  });
});
