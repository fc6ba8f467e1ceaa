export type RuntimeErrorCode =
  | "invalid_options"
  | "invalid_run"
  | "no_model"
  | "closed"
  /** A run paused for approval, or a resume, with no checkpoint key (a usage error). */
  | "no_checkpoint_key"
  /** Not a checkpoint: the wrong shape, or a body that is not the format's. */
  | "invalid_checkpoint"
  /** A checkpoint of another format version. */
  | "checkpoint_version"
  /** A checkpoint whose MAC does not match: changed, truncated or sealed with another key. */
  | "checkpoint_tampered"
  /** A checkpoint of another tenant than the one resuming it. */
  | "checkpoint_foreign"
  /** A checkpoint resumed already: by this runtime, or by any runtime on the same store. */
  | "checkpoint_replayed"
  /** A checkpoint past its expiry (`checkpointTtlMs` when it was sealed). */
  | "checkpoint_expired"
  /** The bundle version the checkpoint ran on is gone, or is not the same bundle. */
  | "checkpoint_bundle"
  /** Decisions that do not answer the pending calls (missing, unknown, malformed, edited args off the schema). */
  | "invalid_decision";

/** A host-side mistake in how the runtime is set up or called; the message names the field and what to do. */
export class RuntimeError extends Error {
  readonly code: RuntimeErrorCode;
  constructor(code: RuntimeErrorCode, message: string) {
    super(message);
    this.name = "RuntimeError";
    this.code = code;
  }
}
