/** The library entry: `createHookRuntime` wires the sandbox executor, the dispatcher, bundles and the agent loop. */

export {
  CHECKPOINT_VERSION,
  type Checkpoint,
  CheckpointBody,
  type CheckpointKey,
  checkpointKeys,
  MIN_KEY_BYTES,
  openCheckpoint,
  parseCheckpointJson,
} from "./checkpoint.js";
export { bundleFromEntry, type EntryBundleOptions, fixedBundleSource } from "./entry-source.js";
export { RuntimeError, type RuntimeErrorCode } from "./errors.js";
export type { RunEvent, RunStartedEvent, RuntimeEvent, RunWarning, RunWarningEvent } from "./events.js";
export type { HookRun, OpenHookRunOptions } from "./hook-run.js";
export { createHookRuntime, type HookRuntime } from "./hook-runtime.js";
export type { HookRuntimeOptions, RuntimeDispatchOptions, RuntimeExecutorOptions } from "./options.js";
export type { ResumeAgentOptions, RunAgentOptions, RunAgentResult } from "./session.js";
export { formatRunEvent, runTrace, type TraceOptions } from "./trace.js";
