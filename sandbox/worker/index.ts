export { PoolClosedError, SandboxOptionsError } from "./errors.js";
export { createInlineExecutor, type InlineExecutorOptions } from "./inline-executor.js";
export { IsolatePool } from "./isolate-pool.js";
export type { IsolatePoolOptions, PhaseListener, PoolStats } from "./pool-types.js";
