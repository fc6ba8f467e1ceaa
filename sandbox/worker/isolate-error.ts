import {
  MAX_WALL_BACKSTOP_FACTOR,
  MIN_WALL_BACKSTOP_FACTOR,
  type WorkerFailureCode,
} from "../../src/protocol/index.js";
import type * as ivm from "./isolated-vm.js";

export interface ClassifiedError {
  readonly code: WorkerFailureCode;
  /** For the operator: what happened and which limit applied. */
  readonly message: string;
  /** The clipped original error text (for `threw`). */
  readonly detail: string;
}

/** isolated-vm's messages, the same in 5.0.4 and 7.0.1 (src/isolate/run_with_timeout.h). */
const TIMED_OUT = "Script execution timed out.";
const MEMORY = "memory limit";
const MAX_DETAIL = 300;

/**
 * Turns what an isolated-vm call threw into a failure code. Anything but a timeout or a memory event is
 * `threw`: a bundle that fails to compile or throws at load, or an error the prelude could not catch
 * (isolated-vm rethrows a promise the hook left rejected without a handler after the call). The error may
 * be a guest-sized string (a rejection's message is copied to the host), so only a prefix is kept.
 */
export function classifyIsolateError(
  error: unknown,
  isolate: ivm.Isolate,
  timeoutMs: number,
  memoryMb: number,
): ClassifiedError {
  const text = errorText(error);
  const detail = text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}…` : text;
  if (text === TIMED_OUT) {
    return { code: "timeout", message: `The hook ran past its ${Math.round(timeoutMs)} ms timeout`, detail };
  }
  if (text.includes(MEMORY) || isolate.isDisposed) {
    return { code: "memory_limit", message: `The hook exceeded its ${memoryMb} MB memory limit`, detail };
  }
  return { code: "threw", message: `The hook failed outside its handler: ${detail}`, detail };
}

/**
 * Why a handler's call ended `timeout`, by whose clock: its thread's CPU time passed `timeoutMs`, or it
 * reached the wall-clock backstop without using it (it waited, or a busy machine did not run it). The
 * text has no measured figure, so that failures that are alike read alike (the fuzz groups by message).
 * Quarantine tells the two apart by `cpuMs`, not by this text.
 */
export function callTimeoutMessage(cpuMs: number, timeoutMs: number): string {
  const limit = Math.round(timeoutMs);
  if (cpuMs > timeoutMs) return `The hook ran past its ${limit} ms timeout (CPU time)`;
  return (
    `The hook ran past its wall-clock backstop (${MIN_WALL_BACKSTOP_FACTOR}–${MAX_WALL_BACKSTOP_FACTOR}× its ` +
    `${limit} ms timeout, by how busy the machine is) without using its ${limit} ms of CPU time: ` +
    "it waited (e.g. Atomics.wait) or the machine was too busy to run it"
  );
}

function errorText(error: unknown): string {
  try {
    if (error instanceof Error) return `${error.name === "Error" ? "" : `${error.name}: `}${error.message}`;
    return typeof error === "string" ? error : String(error);
  } catch {
    return "an unprintable error";
  }
}
