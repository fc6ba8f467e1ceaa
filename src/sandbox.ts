/**
 * `isohook/sandbox`: the executor on its own, for hosts that run hooks without the runtime's dispatcher
 * and agent loop. `invokeHook` is the one way to ask a tenant hook for a typed decision: it checks the call,
 * runs it and parses the guest's reply (`execute` alone returns the reply unparsed).
 */
export {
  createHookExecutor,
  ExecutorClosedError,
  type ExecutorOptions,
  ExecutorOptionsError,
  SandboxStartError,
  type SupervisorEvent,
  type WorkerExitReason,
} from "../sandbox/supervisor/index.js";
export { type InvokedHook, invokeHook } from "./dispatch/index.js";
export {
  DEFAULT_LIMITS,
  type DescribeOutcome,
  type Failure,
  type HookExecutor,
  type HookOutcome,
  type Limits,
  type LimitsInput,
  type SandboxBundle,
  type SandboxCall,
  type SandboxCost,
  type SandboxResult,
} from "./protocol/index.js";
