import type { QuarantineSettings } from "../../src/dispatch/index.js";

/** What the fleet test gives each host process. */
export interface HostConfig {
  readonly url: string;
  readonly host: string;
  readonly tenants: readonly string[];
  readonly quarantine: QuarantineSettings;
  /**
   * How the host's two lanes of runs share the tenants: `mixed`, each lane takes every tenant in turn (up
   * to two of mallory's runs in flight at once); `split`, mallory and acme in one lane, globex in the other.
   */
  readonly lanes: Lanes;
}

export type Lanes = "mixed" | "split";

/** One run as a host saw it: the version it started on, and each tenant hook call's version and outcome. */
export interface RunReport {
  readonly type: "run";
  readonly host: string;
  readonly tenant: string;
  readonly runId: string;
  readonly startedAt: number;
  endedAt: number;
  version: number | null;
  /**
   * `struck`: the call counted towards quarantine (a timeout the tenant's own CPU time caused); `at`: when
   * the host recorded it, ms since the epoch.
   */
  readonly calls: {
    readonly version: number | null;
    readonly code: string;
    readonly struck: boolean;
    readonly at: number;
  }[];
}

/**
 * What host processes tell the fleet test. Runs go in batches (`runs`, every 100 ms): a host whose runs
 * make no sandbox call (a quarantined tenant's) ends thousands a second, and one IPC message per run would
 * swamp the operator's event loop; the operator unpacks each batch into its `run` messages.
 */
export type FleetMessage =
  | { readonly type: "ready"; readonly host: string }
  | RunReport
  | { readonly type: "runs"; readonly host: string; readonly runs: readonly RunReport[] }
  | { readonly type: "error"; readonly host: string; readonly runId: string; readonly message: string }
  | {
      readonly type: "pickup";
      readonly host: string;
      readonly tenant: string;
      readonly version: number;
      readonly at: number;
    }
  | {
      readonly type: "quarantine";
      readonly host: string;
      readonly tenant: string;
      readonly at: number;
      readonly origin: "host" | "fleet";
      readonly strike: number;
    }
  | { readonly type: "store"; readonly host: string; readonly at: number; readonly state: string }
  | { readonly type: "dropped"; readonly host: string; readonly count: number }
  | {
      readonly type: "stats";
      readonly host: string;
      /** False when the runtime's close did not end within 60 s. */
      readonly closed: boolean;
      readonly recorded: number;
      readonly written: number;
      readonly droppedFull: number;
      readonly droppedFailed: number;
      readonly requeued: number;
      readonly pending: number;
    };
