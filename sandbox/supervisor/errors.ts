/** An option of `createHookExecutor` is wrong; the message names it, what was expected and what came. */
export class ExecutorOptionsError extends TypeError {
  override readonly name = "ExecutorOptionsError";
  readonly code = "invalid_executor_options";
}

/** The sandbox workers did not come up; `detail` carries the tail of a worker's stderr when there is one. */
export class SandboxStartError extends Error {
  override readonly name = "SandboxStartError";
  readonly code = "sandbox_start_failed";
  readonly detail: string;
  constructor(reason: string, detail: string) {
    super(
      `The sandbox worker process did not start: ${reason}. Check that isolated-vm is built for this Node ` +
        `version (npm rebuild isolated-vm) and that Node runs with --no-node-snapshot.` +
        (detail === "" ? "" : `\nWorker stderr:\n${detail}`),
    );
    this.detail = detail;
  }
}
