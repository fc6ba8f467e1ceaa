export type ModelErrorCode =
  | "script_exhausted"
  | "model_auth"
  | "model_rejected"
  | "model_unavailable"
  | "model_malformed_reply"
  | "model_timeout"
  | "model_unreachable"
  | "model_config";

/** A model call that could not produce a reply. The message says what to do next. */
export class ModelError extends Error {
  readonly code: ModelErrorCode;
  /** The HTTP status, when a provider answered with one. */
  readonly status: number | undefined;
  constructor(code: ModelErrorCode, message: string, options?: { status?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ModelError";
    this.code = code;
    this.status = options?.status;
  }
}
