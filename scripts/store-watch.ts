/**
 * A host that only serves `active()`: for measuring pick-up across processes (scripts/bench-store.ts and
 * test/store/postgres-processes.test.ts). argv[2] is JSON `{ location, tenantId, changes, pollMs,
 * refreshMs? }`. It prints `{"ready":true}` once it has served the tenant's active version, then calls
 * `active()` every `pollMs` and prints `{"version", "at"}` (`at`: wall-clock ms) for each change it sees,
 * `changes` times, and exits.
 */
import { TenantId } from "../src/protocol/index.js";
import { openStore } from "../src/store/index.js";

const { location, tenantId, changes, pollMs, refreshMs } = JSON.parse(process.argv[2] ?? "{}") as {
  location: string;
  tenantId: string;
  changes: number;
  pollMs: number;
  refreshMs?: number;
};
const store = await openStore(location, { create: false, ...(refreshMs === undefined ? {} : { refreshMs }) });
const tenant = TenantId.parse(tenantId);
let seen = (await store.active(tenant))?.version;
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
for (let count = 0; count < changes; ) {
  await new Promise((resolve) => setTimeout(resolve, pollMs));
  const version = (await store.active(tenant))?.version;
  if (version === seen) continue;
  seen = version;
  count++;
  process.stdout.write(`${JSON.stringify({ version, at: performance.timeOrigin + performance.now() })}\n`);
}
await store.close();
