export type RuntimeErrorCode = "invalid_options" | "invalid_run" | "no_model" | "closed";

/** A host-side mistake in how the runtime is set up or called; the message names the field and what to do. */
export class RuntimeError extends Error {
  readonly code: RuntimeErrorCode;
  constructor(code: RuntimeErrorCode, message: string) {
    super(message);
    this.name = "RuntimeError";
    this.code = code;
  }
}
