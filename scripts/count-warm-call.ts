/**
 * Counts the host-side source files and functions that run during ONE warm `tool.call` through the
 * dispatcher in process mode (tenant bundle loaded, isolate warm, worker ready), with V8's precise
 * coverage: warm up, reset the counters, make one call, read which functions ran. The worker side runs in
 * another process; docs/architecture.md lists it by reading. Run:
 *
 *   node --no-node-snapshot --import tsx scripts/count-warm-call.ts [--functions]
 */

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { type Profiler, Session } from "node:inspector";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { createHookExecutor } from "../sandbox/supervisor/index.js";
import { buildBundle } from "../src/bundler/index.js";
import { createDispatcher } from "../src/dispatch/index.js";
import { RunId, TenantId } from "../src/protocol/index.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const HOOK = `export default { toolCall(event) { return event.call.name === "rm" ? { type: "block", reason: "no" } : undefined; } };`;

const dir = await mkdtemp(join(tmpdir(), "isohook-count-"));
await writeFile(join(dir, "index.ts"), HOOK);
const executor = await createHookExecutor({ workers: 1, spareWorker: false, limits: { timeoutMs: 1_000 } });
const built = await buildBundle(dir, { executor });
const tenantId = TenantId.parse("acme");
const bundle = { tenantId, version: 1, code: built.code, manifest: built.manifest, config: {} };
const run = createDispatcher({ executor, limits: { timeoutMs: 1_000 } }).openRun({
  tenantId,
  runId: RunId.parse("count"),
  bundle,
});
const event = { call: { id: "c1", name: "shell", args: { command: "ls" } }, batch: { index: 0, size: 1 } };
for (let i = 0; i < 50; i++) await run.dispatch("tool.call", event);

const session = new Session();
session.connect();
const post = (method: string, params?: object) =>
  new Promise<unknown>((resolve, reject) =>
    session.post(method, params ?? {}, (error, answer) => (error ? reject(error) : resolve(answer))),
  );
await post("Profiler.enable");
await post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
await post("Profiler.takePreciseCoverage");
const decided = await run.dispatch("tool.call", event);
const { result } = (await post("Profiler.takePreciseCoverage")) as Profiler.TakePreciseCoverageReturnType;
await post("Profiler.stopPreciseCoverage");
session.disconnect();

const ran = new Map<string, Set<string>>();
for (const script of result) {
  if (!script.url.startsWith("file://") || script.url.includes("node_modules")) continue;
  const file = relative(ROOT, fileURLToPath(script.url));
  if (!/^(src|sandbox)\//.test(file)) continue;
  for (const fn of script.functions) {
    if (fn.ranges[0] === undefined || fn.ranges[0].count === 0) continue;
    if (!ran.has(file)) ran.set(file, new Set());
    ran.get(file)?.add(fn.functionName || "(anonymous)");
  }
}
console.log(`decision: ${decided.decision.type}; host files that ran code: ${ran.size}`);
for (const [file, fns] of [...ran].sort()) {
  console.log(process.argv.includes("--functions") ? `${file}: ${[...fns].join(", ")}` : file);
}
await executor.close();
await rm(dir, { recursive: true, force: true });
