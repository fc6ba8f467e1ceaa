import type { ComparisonReport } from "../decisionlog/index.js";
import type { BundleHash, FailureCode, HookPoint, JsonValue } from "../protocol/index.js";

/** One thing wrong with an upload. A rejected upload's report lists every one the gate could find. */
export type GateReason =
  /** The module does not bundle (syntax or type-stripping errors, Node built-ins, unresolved imports, …). */
  | { readonly code: "bundle_failed"; readonly message: string; readonly problems: readonly GateProblem[] }
  | { readonly code: "too_large"; readonly message: string; readonly bytes: number; readonly maxBytes: number }
  /** The default export has keys that are no hook point's handler, or handlers that are not functions. */
  | { readonly code: "unknown_exports"; readonly message: string; readonly problems: readonly GateProblem[] }
  /** Evaluating the bundle in the sandbox failed (it threw, timed out or ran out of memory while loading). */
  | { readonly code: "describe_failed"; readonly message: string }
  | { readonly code: "no_hook_points"; readonly message: string }
  | { readonly code: "no_fixtures"; readonly message: string; readonly file: string }
  | { readonly code: "invalid_fixtures"; readonly message: string; readonly file: string }
  | {
      readonly code: "fixture_failed";
      readonly message: string;
      readonly line: number;
      readonly point: string;
    }
  | {
      readonly code: "fuzz_failed";
      readonly message: string;
      readonly point: HookPoint;
      readonly failure: FailureCode;
      /** The (shrunk) event that made the hook fail. */
      readonly event: JsonValue;
      readonly seed: number;
    }
  /** `upload --replay`: the candidate failed recorded calls the active version decided, or (asked) changed one. */
  | {
      readonly code: "replay_failed";
      readonly message: string;
      readonly differed: number;
      readonly newFailures: number;
    };

export type GateReasonCode = GateReason["code"];

export interface GateProblem {
  readonly message: string;
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
}

export interface FixtureSummary {
  readonly file: string;
  readonly total: number;
  readonly passed: number;
  readonly failed: number;
  /**
   * The fixture events (up to 256 KB of JSON, in file order), kept so that `isohook fuzz --tenant` can
   * mutate and grow them for a stored bundle, whose source folder is gone. Absent in older reports.
   */
  readonly events?: readonly FixtureEvent[];
}

/** One fixture event as the gate report keeps it. */
export interface FixtureEvent {
  readonly line: number;
  readonly point: HookPoint;
  readonly event: JsonValue;
}

export interface FuzzSummary {
  readonly point: HookPoint;
  /** Events tried (fewer than asked when the time budget ran out first). */
  readonly runs: number;
  readonly passed: boolean;
  readonly seed: number;
  readonly durationMs: number;
}

/**
 * What the deploy gate found. Stored with every accepted version (`isohook inspect` shows it) and printed
 * for every rejected upload. JSON all the way down.
 */
export interface GateReport {
  readonly type: "passed" | "rejected";
  readonly entry: string;
  readonly hash: BundleHash | null;
  readonly bytes: number | null;
  readonly hookPoints: readonly HookPoint[];
  readonly reasons: readonly GateReason[];
  /** Worth knowing, not blocking: e.g. an exported point no fixture covers. */
  readonly warnings: readonly string[];
  readonly fixtures: FixtureSummary | null;
  readonly fuzz: readonly FuzzSummary[];
  /** `upload --replay <n>`: the tenant's last recorded calls run through the candidate, compared. */
  readonly replay?: ComparisonReport;
  readonly durationMs: number;
}
