export type DispatchErrorCode = "invalid_options" | "invalid_platform_hooks";

/** A host-side mistake in how the dispatcher is set up (never a hook's failure: those are outcomes). */
export class DispatchError extends Error {
  readonly code: DispatchErrorCode;
  constructor(code: DispatchErrorCode, message: string) {
    super(message);
    this.name = "DispatchError";
    this.code = code;
  }
}
