import { replayDecisions, replayRecordOf, viewOf } from "../decisionlog/index.js";
import { type JsonValue, parseLimits, type TenantId } from "../protocol/index.js";
import type { BundleStore, UploadResult } from "../store/index.js";
import { checkedTenantId, type DeployGateOptions, type GateResult, runDeployGate } from "./deploy-gate.js";
import type { GateReport } from "./gate-report.js";

export interface DeployHookOptions extends DeployGateOptions {
  readonly store: BundleStore;
  /** Who uploads (an operator name). */
  readonly by: string;
  /** Activate the new version in the same transaction. */
  readonly activate?: boolean;
  /** Stored with the version; also what the gate's fuzz runs the hooks with. Default: the latest version's. */
  readonly config?: JsonValue;
  /**
   * A last gate step: the tenant's last `records` recorded calls (the decision log) run through the
   * candidate and compared with what was decided. A call the candidate fails where the recorded version
   * decided rejects the upload; changed decisions are reported, and reject it with `failOnDiff`.
   */
  readonly replay?: { readonly records: number; readonly failOnDiff?: boolean };
}

export type DeployResult =
  | { readonly type: "deployed"; readonly report: GateReport; readonly upload: UploadResult }
  | { readonly type: "rejected"; readonly report: GateReport };

/**
 * Uploads a hook module: runs the deploy gate and, only if it passes, stores the bundle as the tenant's
 * next version (with the gate report, optionally activated) in one store transaction. A rejected upload
 * stores nothing. There is no way around the gate.
 *
 * @example
 * const result = await deployHook({ store, executor, entry: "hooks/redact-secrets", tenantId, by: "ops", activate: true });
 */
export async function deployHook(options: DeployHookOptions): Promise<DeployResult> {
  const { store, signal } = options;
  const tenantId = checkedTenantId(options.tenantId);
  // The fuzz must see the config the version will run with: an upload without one inherits the latest.
  let config = options.config;
  if (config === undefined) {
    const latest = (await store.tenant(tenantId, signal))?.latestVersion ?? null;
    config = latest === null ? {} : ((await store.version(tenantId, latest, signal))?.config ?? {});
  }
  let gate = await runDeployGate({ ...options, config });
  if (gate.type === "rejected") return gate;
  if (options.replay !== undefined) {
    const report = await replayStep({ ...options, tenantId }, gate, config);
    if (report.type === "rejected") return { type: "rejected", report };
    gate = { ...gate, report };
  }
  const upload = await store.upload(
    {
      tenantId,
      code: gate.bundle.code,
      sourceMap: gate.bundle.sourceMap,
      manifest: gate.bundle.manifest,
      config,
      gateReport: gate.report as unknown as JsonValue,
      by: options.by,
      activate: options.activate === true,
    },
    signal,
  );
  return { type: "deployed", report: gate.report, upload };
}

/** The replay step: the gate's report with the comparison, rejected as `DeployHookOptions.replay` says. */
async function replayStep(
  options: DeployHookOptions & { readonly tenantId: TenantId },
  gate: Extract<GateResult, { type: "passed" }>,
  config: JsonValue,
): Promise<GateReport> {
  const { store, tenantId, signal, replay } = options;
  if (replay === undefined) return gate.report;
  const started = performance.now();
  const stored = await store.decisions({ tenantId, limit: replay.records }, signal);
  const latest = (await store.tenant(tenantId, signal))?.latestVersion ?? 0;
  const candidate = { tenantId, version: latest + 1, code: gate.bundle.code, manifest: gate.bundle.manifest, config };
  const limits = parseLimits(options.limits ?? {}, (message) => new TypeError(message));
  const records = stored.map(viewOf).map(replayRecordOf);
  const comparison = await replayDecisions({ executor: options.executor, candidate, records, limits, signal });
  const { differed, newFailures } = comparison;
  const reasons = [...gate.report.reasons];
  if (newFailures > 0 || (replay.failOnDiff === true && differed > 0)) {
    const why =
      newFailures > 0
        ? `${newFailures} recorded call${newFailures === 1 ? "" : "s"} the active version decided fail${newFailures === 1 ? "s" : ""} under the new version`
        : `${differed} recorded decision${differed === 1 ? "" : "s"} changed (--fail-on-diff)`;
    reasons.push({ code: "replay_failed", message: `Replay: ${why}`, differed, newFailures });
  }
  const durationMs = gate.report.durationMs + (performance.now() - started);
  return {
    ...gate.report,
    type: reasons.length > 0 ? "rejected" : "passed",
    reasons,
    replay: comparison,
    durationMs,
  };
}
