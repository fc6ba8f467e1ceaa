import { join, relative, resolve } from "node:path";
import {
  BundleError,
  type CompiledHook,
  compileHook,
  describeBundle,
  type ResolvedEntry,
  resolveEntry,
} from "../bundler/index.js";
import { runFixtures } from "../fixture-runner/index.js";
import { fuzzPoint } from "../fuzz/index.js";
import {
  type BundleManifest,
  type HookExecutor,
  hookPointOfHandler,
  type JsonValue,
  Limits,
  type LimitsInput,
  SDK_VERSION,
  TenantId,
} from "../protocol/index.js";
import { clipped, printable } from "../terminal/index.js";
import { checkFixtures, FIXTURES_FILE, loadFixtures } from "./gate-fixtures.js";
import type { FuzzSummary, GateReason, GateReport } from "./gate-report.js";

/** The largest bundle the gate builds at all; `limits.maxBundleBytes` decides what passes. */
const BUILD_CAP_BYTES = 64 * 1024 * 1024;

/** A tenant id from a library caller, checked: a bad one is a TypeError that says what ids look like. */
export function checkedTenantId(value: string): TenantId {
  const parsed = TenantId.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new TypeError(`Invalid tenantId ${JSON.stringify(value)}: ${parsed.error.issues[0]?.message}`);
}

export interface DeployGateOptions {
  /** The hook module: a file, or a folder with index.ts. Its `fixtures.jsonl` sits beside it. */
  readonly entry: string;
  /** The real sandbox (`createHookExecutor()`); the caller owns and closes it. */
  readonly executor: HookExecutor;
  /** The tenant (1–64 of a-z 0-9 . _ -, starting with a letter or digit); another string is a TypeError. */
  readonly tenantId: string;
  /** The tenant config the version will run with: hooks see it as `ctx.config` during the fuzz. */
  readonly config?: JsonValue;
  /** Must match the executor's limits; `maxBundleBytes` is the size cap. */
  readonly limits?: LimitsInput;
  /** Fuzz bounds per exported point: default 100 events, 2000 ms, a random seed. */
  readonly fuzz?: { readonly runs?: number; readonly timeMs?: number; readonly seed?: number };
  /** Where a relative entry is resolved from. Default: process.cwd(). */
  readonly cwd?: string;
  /**
   * The hook folder, relative to `cwd`: the bundle and fixtures.jsonl may only use files inside it.
   * Default: the entry's folder (never one above it); wider only when all of it is the tenant's.
   */
  readonly root?: string;
  readonly signal?: AbortSignal;
}

/** A passed gate carries the bundle to store; a rejected one only its report. */
export type GateResult =
  | {
      readonly type: "passed";
      readonly report: GateReport;
      readonly bundle: { readonly code: string; readonly sourceMap: string; readonly manifest: BundleManifest };
    }
  | { readonly type: "rejected"; readonly report: GateReport };

/**
 * The deploy gate (docs/architecture.md, "The deploy gate"): the module bundles; its default export has only known hook
 * points, as functions; it is under the size cap; its `fixtures.jsonl` passes in the real sandbox; and a fuzz of
 * generated valid events on every exported point never fails (no timeout, memory, crash, pending, throw or
 * invalid result). The gate keeps going after a failed check wherever it still can, so a rejection lists
 * every reason. It stores nothing: `deployHook` does that for a passed gate.
 *
 * @example
 * const result = await runDeployGate({ entry: "hooks/redact-secrets", executor, tenantId });
 * if (result.type === "rejected") for (const r of result.report.reasons) console.log(r.message);
 */
export async function runDeployGate(options: DeployGateOptions): Promise<GateResult> {
  const started = performance.now();
  const { executor, signal } = options;
  const tenantId = checkedTenantId(options.tenantId);
  const limits = Limits.parse(options.limits ?? {});
  const cwd = options.cwd ?? process.cwd();
  const reasons: GateReason[] = [];
  const warnings: string[] = [];
  let shownEntry = options.entry;
  const report = (fields: Partial<GateReport>): GateReport => ({
    type: reasons.length === 0 ? "passed" : "rejected",
    entry: shownEntry,
    hash: null,
    bytes: null,
    hookPoints: [],
    reasons,
    warnings,
    fixtures: null,
    fuzz: [],
    ...fields,
    durationMs: Math.round(performance.now() - started),
  });

  // Every file of the tenant's folder is read and checked before the sandbox is first used; a fixtures
  // file that may not be read at all (a symlink out, a FIFO, a device) stops the gate there.
  const bundleFailed = (error: unknown): GateResult => {
    if (!(error instanceof BundleError)) throw error;
    reasons.push({ code: "bundle_failed", message: error.message, problems: error.problems });
    return { type: "rejected", report: report({}) };
  };
  let hook: ResolvedEntry;
  try {
    hook = await resolveEntry(options.entry, cwd, options.root);
  } catch (error) {
    return bundleFailed(error);
  }
  // Everything the report names is relative to the hook's folder: it is stored, and an uploader's paths
  // (their home folder, their checkout) are not the platform's business.
  const named = resolve(cwd, options.entry);
  shownEntry = named === hook.dir ? "index.ts" : relative(hook.dir, named);
  const fixtureFile = join(hook.dir, FIXTURES_FILE);
  const shownFile = FIXTURES_FILE;
  const loaded = await loadFixtures(fixtureFile, shownFile, hook, reasons);
  if (loaded === "refused") return { type: "rejected", report: report({}) };
  let built: CompiledHook;
  try {
    built = await compileHook(named === hook.dir ? "." : shownEntry, {
      cwd: hook.dir,
      root: options.root === undefined ? undefined : resolve(cwd, options.root),
      maxBundleBytes: BUILD_CAP_BYTES,
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    return bundleFailed(error);
  }
  const base = { hash: built.hash, bytes: built.bytes };
  if (built.bytes > limits.maxBundleBytes) {
    reasons.push({
      code: "too_large",
      message: `The bundle is ${built.bytes} bytes, over the ${limits.maxBundleBytes}-byte cap: remove dependencies or split the policy.`,
      bytes: built.bytes,
      maxBytes: limits.maxBundleBytes,
    });
  }

  const exported = await exportedPoints(built, executor, tenantId, reasons, signal);
  if (exported === undefined) return { type: "rejected", report: report(base) };
  const { hookPoints } = exported;
  const manifest: BundleManifest = {
    hash: built.hash,
    bytes: built.bytes,
    ...exported,
    sdkVersion: SDK_VERSION,
    entry: shownEntry,
  };
  if (hookPoints.length === 0 && exported.observe === undefined && !reasons.some((r) => r.code === "unknown_exports")) {
    reasons.push({
      code: "no_hook_points",
      message: "The default export has no handlers: export at least one, e.g. `toolCall(event) { … }`.",
    });
  }

  const sandboxBundle = { hash: built.hash, code: built.code };
  const { summary: fixtures, dictionary } = await checkFixtures(loaded, shownFile, reasons, async (fixtures) =>
    runFixtures({
      executor,
      bundle: { code: built.code, manifest, sourceMap: built.sourceMap },
      tenantId,
      fixtures,
      limits,
      ...(signal ? { signal } : {}),
    }),
  );
  for (const point of hookPoints) {
    if (fixtures && !dictionary.points.has(point))
      warnings.push(`No fixture exercises ${point}: add one to ${shownFile}.`);
  }
  // Observe-only handlers are fuzzed like the deciding ones: their failures would be quarantined in production.
  const targets = [
    ...hookPoints.map((point) => ({ point, observe: false })),
    ...(exported.observe?.hookPoints ?? []).map((point) => ({ point, observe: true })),
  ];

  const fuzz: FuzzSummary[] = [];
  // One seed for every point: `--seed <n>` replays the whole fuzz.
  const seed = options.fuzz?.seed ?? Math.floor(Math.random() * 2 ** 31);
  for (const { point, observe } of targets) {
    const target = {
      executor,
      bundle: sandboxBundle,
      manifest,
      tenantId,
      config: options.config ?? {},
      limits,
      observe,
    };
    const result = await fuzzPoint(target, {
      point,
      dictionary: dictionary.strings,
      runs: options.fuzz?.runs ?? 100,
      timeMs: options.fuzz?.timeMs ?? 2_000,
      seed,
      stopAtFirstFailure: true,
      ...(signal ? { signal } : {}),
    });
    const failed = result.failures[0];
    const summary = { point, runs: result.runs, passed: failed === undefined, seed, durationMs: result.durationMs };
    fuzz.push(observe ? { ...summary, observe: true } : summary);
    if (failed) {
      reasons.push({
        code: "fuzz_failed",
        // The failure message is the tenant's (a thrown message): escaped, so it stays on this reason's line.
        message: printable(
          `${observe ? "observe " : ""}${point} failed with ${failed.code} (${failed.message}) on the generated event ${clipped(JSON.stringify(failed.event), 300)}; reproduce with --seed ${seed}`,
        ),
        point,
        failure: failed.code,
        event: failed.event,
        seed,
      });
    }
  }

  const final = report({ ...base, hookPoints, fixtures, fuzz });
  if (final.type === "rejected") return { type: "rejected", report: final };
  return { type: "passed", report: final, bundle: { code: built.code, sourceMap: built.sourceMap, manifest } };
}

/**
 * The exported hook points and matchers; unknown keys become a reason but the known (decision) points are
 * still checked.
 */
async function exportedPoints(
  built: CompiledHook,
  executor: HookExecutor,
  tenantId: TenantId,
  reasons: GateReason[],
  signal: AbortSignal | undefined,
): Promise<Pick<BundleManifest, "hookPoints" | "tools" | "observe"> | undefined> {
  try {
    const { hookPoints, tools, observe } = await describeBundle(built, executor, {
      tenantId,
      ...(signal ? { signal } : {}),
    });
    return { hookPoints, ...(tools === undefined ? {} : { tools }), ...(observe === undefined ? {} : { observe }) };
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
    if (error.code === "describe_failed") {
      reasons.push({ code: "describe_failed", message: error.message });
      return undefined;
    }
    reasons.push({ code: "unknown_exports", message: error.message, problems: error.problems });
    const described = await executor.describe(tenantId, { hash: built.hash, code: built.code }, signal);
    if (described.type === "failed") return undefined;
    const points = new Set(described.handlers.map(hookPointOfHandler).filter((p) => p !== undefined));
    return { hookPoints: [...points] };
  }
}
