import type { BundleRef, Failure, FailureCode, HookPoint } from "../protocol/index.js";

/**
 * What telemetry reads of one hook call: the dispatcher's provenance record (`HookRecord`) satisfies it, so
 * the record is passed as it is, never copied. Only ids, codes, types and times are read from it.
 */
export interface HookCallView {
  readonly point: HookPoint;
  readonly hookId: string;
  readonly source: string;
  readonly bundle: BundleRef | undefined;
  readonly policy: string;
  readonly outcome:
    | { readonly type: "decided"; readonly result: { readonly type: string } | null }
    | { readonly type: "failed"; readonly failure: Failure };
  readonly cpuMs: number;
  readonly runMs: number;
  readonly queuedMs?: number | undefined;
  readonly loadMs?: number | undefined;
  readonly loadAfterRecycle?: true | undefined;
  readonly evicted?: number | undefined;
}

/**
 * How far a call got: `sandbox` (it crossed into the sandbox), or refused before it: `budget` (the turn's or
 * run's hook time was spent), `refused` (quarantine, an event over the cap, no sandbox), `in_process` (a
 * platform hook, never sandboxed).
 */
export type CallReach = "sandbox" | "budget" | "refused" | "in_process";

/** A quarantine a call's strike started (`QuarantineBook.strike`): its code, its entry count, its length. */
export interface QuarantineEntry {
  readonly code: FailureCode;
  readonly strike: number;
  readonly cooldownMs: number;
  /** `host`: this host's failures put it there; `fleet`: the shared store's book did. */
  readonly origin: "host" | "fleet";
}

/** `noop` for a hook that returned nothing, else its result's type; undefined for a failed call. */
export function decisionOf(call: HookCallView): string | undefined {
  if (call.outcome.type === "failed") return undefined;
  return call.outcome.result === null ? "noop" : call.outcome.result.type;
}
