export { PoolClosedError, PreludeError, SandboxOptionsError } from "./errors.js";
export { createInlineExecutor, type InlineExecutorOptions } from "./inline-executor.js";
export { IsolatePool } from "./isolate-pool.js";
export { POOL_DEFAULTS } from "./pool-options.js";
export type { IsolatePoolOptions, PhaseListener, PoolStats } from "./pool-types.js";
