/**
 * The sandbox supervisor: the `process` executor (tenants sharded over supervised worker processes) and
 * `createHookExecutor`, the one factory host code uses. Tests reach the process executor's internals by
 * path (create-executor.ts `startProcessExecutor`, worker-slot.ts).
 */
export { ExecutorClosedError } from "../../src/protocol/index.js";
export { createHookExecutor } from "./create-executor.js";
export { ExecutorOptionsError, SandboxStartError } from "./errors.js";
export type { SupervisorEvent, WorkerExitReason } from "./events.js";
export { checkExecutorOptions, type ExecutorOptions } from "./options.js";
export { shardOf } from "./shard.js";
