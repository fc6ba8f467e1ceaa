export { createInlineExecutor, type InlineExecutorOptions } from "./inline-executor.js";
export { IsolatePool } from "./isolate-pool.js";
export type { IsolatePoolOptions, PoolCall, PoolFailureCode, PoolResult, PoolStats } from "./pool-types.js";
