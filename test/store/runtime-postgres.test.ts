import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import type { HookExecutor, TenantId } from "../../src/protocol/index.js";
import { createHookRuntime, type RuntimeEvent } from "../../src/runtime/index.js";
import { PostgresBundleStore } from "../../src/store/index.js";
import { GOOD_INDEX, writeHook } from "../gate/hook-modules.js";
import { destructiveRun } from "./helpers/agent-run.js";
import { runStoreChild } from "./helpers/files.js";
import { CuttableProxy, dropSchema, freshSchema, pgUrl, postgresAvailable, proxiedUrl } from "./helpers/postgres.js";

const acme = "acme" as TenantId;
const available = await postgresAvailable();
let dir: string;
let executor: HookExecutor;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "isohook-runtime-pg-"));
  if (available) executor = await createHookExecutor({ workers: 1, spareWorker: false });
});
afterAll(async () => {
  await executor?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ran: string[] = [];

describe.skipIf(!available)("a runtime serving from a PostgreSQL store", () => {
  it("runs another host's activation on the next run, and keeps running its hooks while the database is down", async () => {
    const schema = freshSchema();
    const proxy = new CuttableProxy();
    await proxy.up();
    try {
      const url = pgUrl(schema);
      const admin = await PostgresBundleStore.open(url);
      for (const [name, index] of [
        ["allows", "export default { toolCall() {} };\n"],
        ["blocks", GOOD_INDEX],
      ] as const) {
        const built = await buildBundle(writeHook(dir, name, index), { executor });
        await admin.upload({ tenantId: acme, ...built, by: "ops", activate: name === "allows" });
      }
      await admin.close();
      const events: RuntimeEvent[] = [];
      const runtime = await createHookRuntime({
        store: proxiedUrl(schema, proxy),
        executor,
        onEvent: (event) => events.push(event),
      });
      const run = () => destructiveRun(runtime, ran);
      expect((await run()).bundle?.version).toBe(1);
      expect(ran).toEqual(["rm -rf /"]);

      expect((await runStoreChild({ op: "activate", path: url, tenantId: "acme", version: 2 })).code).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await run()).bundle?.version).toBe(2);
      expect(ran).toEqual(["rm -rf /"]);

      await proxy.down();
      const during = await run();
      expect([during.stopReason, during.bundle?.version]).toEqual(["completed", 2]);
      expect(ran).toEqual(["rm -rf /"]);
      for (let i = 0; i < 100 && !events.some((e) => e.type === "store.unreachable"); i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await runtime.close();
      expect(events.filter((e) => e.type.startsWith("store."))).toEqual([
        { type: "store.unreachable", store: "postgres", reason: expect.any(String) },
      ]);
    } finally {
      await proxy.down();
      await dropSchema(schema);
    }
  });
});
