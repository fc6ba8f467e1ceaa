/** The pool was used after `dispose()`: create a new one. */
export class PoolClosedError extends Error {
  readonly code = "pool_closed";
  constructor() {
    super("This IsolatePool was disposed: create a new IsolatePool (or executor) to run hooks again");
  }
}

/** An `IsolatePool` or inline-executor option is out of range; the message names it and the value. */
export class SandboxOptionsError extends Error {
  readonly code = "invalid_options";
}

/**
 * The guest prelude's source did not survive the loader that ran this process (its function source is
 * embedded into every isolate). Happens when a transform injects helpers or instrumentation into
 * sandbox/guest/index.ts (e.g. istanbul coverage): run under tsx or plain vitest, or use v8 coverage.
 */
export class PreludeError extends Error {
  readonly code = "prelude_broken";
}
