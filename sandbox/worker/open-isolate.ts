import type { BundleHash, SandboxLimits, WorkerFailureCode } from "../../src/protocol/index.js";
import { type ClassifiedError, classifyIsolateError } from "./isolate-error.js";
import type { ExternalCopy } from "./isolated-vm.js";
import { verifyPrelude } from "./prelude-check.js";
import { PREPARE_TIMEOUT_MS, type PreparedIsolate, prepareIsolate } from "./prepared-isolate.js";
import type { SpareIsolates } from "./spare-isolates.js";

/** isolated-vm's types, taken from the prepared isolate so that only the loader names the package. */
type Isolate = PreparedIsolate["isolate"];
type Reference = PreparedIsolate["call"];

/**
 * A bundle the pool knows: its code, its limits, the prelude built for those limits, and V8's code cache
 * of its script, made by this worker's first compile of that code (never bytes from outside the process:
 * a reload with other code is a new `LoadedBundle`).
 */
export interface LoadedBundle {
  readonly code: string;
  readonly limits: SandboxLimits;
  readonly prelude: string;
  codeCache: ExternalCopy | undefined;
}

/** One live isolate: the prelude's entry points, referenced before any tenant code ran. */
export interface LiveIsolate {
  readonly key: string;
  readonly bundleHash: BundleHash;
  readonly isolate: Isolate;
  readonly call: Reference;
  readonly collect: Reference;
  readonly describe: Reference;
  readonly memoryMb: number;
  /** Its slot in the CPU guard (cpu-guard.ts), 0 when unguarded. */
  slot: number;
  lastUsed: number;
  heapBytes: number;
  calls: number;
}

/** `deadline`: when loading had to be done by (a describe keeps it for the rest of its work). */
export type Opened =
  | { type: "opened"; live: LiveIsolate; deadline: number }
  | { type: "failed"; code: WorkerFailureCode; message: string };

/**
 * An isolate with the prelude (a spare if one is ready), then the bundle evaluated and adopted. The
 * bundle's `loadTimeoutMs` starts once the prelude is in: creating the isolate is the sandbox's cost, not
 * the tenant's. The CPU mark is taken after loading, so a call's `cpuMs` covers its handler only. Never
 * throws for anything the bundle does.
 */
export function openIsolate(
  key: string,
  bundleHash: BundleHash,
  bundle: LoadedBundle,
  loadTimeoutMs: number,
  spares: SpareIsolates | undefined,
  now: number,
): Opened {
  verifyPrelude();
  const { memoryMb } = bundle.limits;
  let phase = "prelude";
  let prepared = spares?.take(bundle.prelude, memoryMb);
  try {
    prepared ??= prepareIsolate(bundle.prelude, memoryMb, PREPARE_TIMEOUT_MS);
    const deadline = performance.now() + loadTimeoutMs;
    phase = "compile";
    // `void 0` makes the completion value a primitive whatever the bundle's last statement is.
    const filename = `bundle:${bundleHash}`;
    const cachedData = bundle.codeCache;
    const script = prepared.isolate.compileScriptSync(
      `${bundle.code}\n;void 0;`,
      cachedData === undefined ? { filename, produceCachedData: true } : { filename, cachedData },
    );
    if (cachedData === undefined) bundle.codeCache = script.cachedData;
    phase = "run";
    script.runSync(prepared.context, { timeout: remaining(deadline) });
    script.release();
    prepared.adopt.applySync(undefined, [], { timeout: remaining(deadline) });
    prepared.adopt.release();
    const { isolate, call, collect, describe } = prepared;
    const live: LiveIsolate = {
      key,
      bundleHash,
      isolate,
      call,
      collect,
      describe,
      memoryMb,
      slot: 0,
      lastUsed: now,
      heapBytes: 0,
      calls: 0,
    };
    return { type: "opened", live, deadline };
  } catch (error) {
    if (prepared === undefined) {
      const text = error instanceof Error ? error.message : String(error);
      return { type: "failed", code: "unavailable", message: `The sandbox could not create an isolate: ${text}` };
    }
    const classified = classifyIsolateError(error, prepared.isolate, loadTimeoutMs, memoryMb);
    disposeQuietly(prepared.isolate);
    return { type: "failed", code: classified.code, message: loadFailure(classified, phase, loadTimeoutMs, memoryMb) };
  }
}

/** Says that the bundle, not a handler, failed: loading is tenant code under its own limit. */
function loadFailure(classified: ClassifiedError, phase: string, loadTimeoutMs: number, memoryMb: number): string {
  switch (classified.code) {
    case "timeout":
      return `The bundle's top-level code did not finish loading within its ${loadTimeoutMs} ms load timeout`;
    case "memory_limit":
      return `The bundle exceeded its ${memoryMb} MB memory limit while loading`;
    case "threw":
      return `The bundle ${phase === "compile" ? "does not compile" : "threw while loading"}: ${classified.detail}`;
    case "unavailable":
      return classified.message;
    default: {
      const never: never = classified.code;
      return never;
    }
  }
}

/** What is left until `deadline`, as an `applySync` timeout (at least 1 ms: 0 would mean none). */
export function remaining(deadline: number): number {
  return Math.max(1, Math.ceil(deadline - performance.now()));
}

export function disposeQuietly(isolate: Isolate): void {
  try {
    if (!isolate.isDisposed) isolate.dispose();
  } catch {
    // Already disposed by isolated-vm after a memory-limit event.
  }
}
