import type { JsonValue } from "../protocol/index.js";
import type { BundleStore, UploadResult } from "../store/index.js";
import { type DeployGateOptions, runDeployGate } from "./deploy-gate.js";
import type { GateReport } from "./gate-report.js";

export interface DeployHookOptions extends DeployGateOptions {
  readonly store: BundleStore;
  /** Who uploads (an operator name). */
  readonly by: string;
  /** Activate the new version in the same transaction. */
  readonly activate?: boolean;
  /** Stored with the version; also what the gate's fuzz runs the hooks with. Default: the latest version's. */
  readonly config?: JsonValue;
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
  // The fuzz must see the config the version will run with: an upload without one inherits the latest.
  let config = options.config;
  if (config === undefined) {
    const latest = (await store.tenant(options.tenantId, signal))?.latestVersion ?? null;
    config = latest === null ? {} : ((await store.version(options.tenantId, latest, signal))?.config ?? {});
  }
  const gate = await runDeployGate({ ...options, config });
  if (gate.type === "rejected") return gate;
  const upload = await store.upload(
    {
      tenantId: options.tenantId,
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
