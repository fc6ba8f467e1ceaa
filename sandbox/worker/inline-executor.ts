import type { HookExecutor, LimitsInput } from "../../src/protocol/index.js";
import type { IsolatePoolOptions } from "./pool-types.js";

export interface InlineExecutorOptions {
  readonly limits?: LimitsInput;
  readonly pool?: IsolatePoolOptions;
  /** Suppresses the once-per-process stderr warning that inline mode is for tests and benchmarks only. */
  readonly quiet?: boolean;
}

/**
 * A `HookExecutor` that keeps isolates in the calling process. For tests and benchmarks only: a fatal
 * out-of-memory in a guest aborts the whole process (DESIGN §1).
 */
export function createInlineExecutor(options: InlineExecutorOptions = {}): HookExecutor {
  void options;
  throw new Error("createInlineExecutor: not implemented yet");
}
