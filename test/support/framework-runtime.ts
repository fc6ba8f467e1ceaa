import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import { TenantId } from "../../src/protocol/index.js";
import { createHookRuntime, type HookRuntime } from "../../src/runtime/index.js";
import { MemoryBundleStore } from "../../src/store/index.js";

/**
 * A runtime (process sandbox) whose tenant `acme` runs `entry`: by default test/fixtures/frameworks, the
 * adapters' policy.
 */
export async function frameworkRuntime(
  entry = "test/fixtures/frameworks/index.ts",
): Promise<{ runtime: HookRuntime; close(): Promise<void> }> {
  const executor = await createHookExecutor({ workers: 1, spareWorker: false, limits: { timeoutMs: 2_000 } });
  const store = new MemoryBundleStore();
  const built = await buildBundle(entry, { executor });
  await store.upload({ tenantId: TenantId.parse("acme"), ...built, by: "test", activate: true });
  const runtime = await createHookRuntime({ executor, store, decisionLog: false });
  return {
    runtime,
    async close() {
      await runtime.close();
      await executor.close();
    },
  };
}
