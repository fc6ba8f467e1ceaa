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

/**
 * The isolated-vm build for the running Node is not installed: npm drops an optional dependency whose
 * build fails (or skips it when its `engines` exclude this Node), so this shows up at the first isolate.
 */
export class IsolatedVmMissingError extends Error {
  readonly code = "isolated_vm_missing";
  constructor(alias: string, cause: unknown) {
    super(
      `isolated-vm could not be loaded for Node ${process.version} (package ${alias}): ${String(cause)}. ` +
        `Its native build may have failed during npm install: run \`npm rebuild ${alias} --foreground-scripts\` ` +
        "to see why (it needs python3, make and a C++ compiler), on Node 20, 24 or 26.",
      { cause },
    );
  }
}
