import { HOOK_POINT_NAMES, type HookPoint, type TenantId } from "../protocol/index.js";
import { StoreError } from "./errors.js";
import { checkBy, checkTenantId } from "./store-inputs.js";

/**
 * What a store keeps for the decision log: each tenant's settings (absent = off) and the recorded tenant
 * hook calls, already masked and capped by the writer (src/decisionlog). Settings changes are audited
 * (`type: "log"`); appends and prunes are not admin changes and are not.
 */
export interface DecisionLogStore {
  /** Every tenant's log settings by tenant id, or one tenant's (an empty list when its log is off). */
  logSettings(tenantId?: TenantId, signal?: AbortSignal): Promise<TenantLogSettings[]>;
  /** Turns a tenant's log on with these settings (`settings`), or off (`null`); audited with `by`. */
  setLogSettings(input: LogSettingsInput, signal?: AbortSignal): Promise<LogSettingsChange>;
  /** Stores a batch of records in one transaction; returns how many. */
  appendDecisions(rows: readonly DecisionRow[], signal?: AbortSignal): Promise<number>;
  /** The last `limit` (default 100) matching records, oldest first. */
  decisions(query: DecisionQuery, signal?: AbortSignal): Promise<StoredDecision[]>;
  /** Deletes a tenant's records older than `before` (ms) and all but its newest `keep`; returns how many. */
  pruneDecisions(input: PruneInput, signal?: AbortSignal): Promise<number>;
}

/** What the operator names to drop or hash before anything is written, e.g. `event.call.args.password`. */
export interface MaskRule {
  /** `event.…`, `ctx.…` or `result.…`; `*` matches every key or array item at its level. */
  readonly path: string;
  readonly action: "drop" | "hash";
}

export interface LogSettings {
  /** The share of runs recorded, (0, 1]: decided per run by a stable hash of its run id. */
  readonly sample: number;
  readonly mask: readonly MaskRule[];
  /** Records older than this many days are deleted (1–3650). */
  readonly retainDays: number;
  /** At most this many records are kept per tenant, the newest (1–1,000,000). */
  readonly retain: number;
}

export interface TenantLogSettings extends LogSettings {
  readonly tenantId: TenantId;
  readonly updatedAt: string;
  readonly updatedBy: string;
}

export interface LogSettingsInput {
  readonly tenantId: TenantId;
  readonly settings: LogSettings | null;
  readonly by: string;
}

export interface LogSettingsChange {
  readonly tenantId: TenantId;
  readonly settings: LogSettings | null;
  readonly previous: LogSettings | null;
}

/** One record as the writer stores it: strings already masked and capped. */
export interface DecisionRow {
  readonly tenantId: TenantId;
  /** ms since the epoch. */
  readonly at: number;
  readonly runId: string;
  readonly turn: number;
  readonly point: HookPoint;
  /** The bundle version and hash that decided (the record's `bundle`). */
  readonly version: number;
  readonly hash: string;
  /** The event's JSON, or its first characters when `truncated`. */
  readonly event: string;
  /** The length of the whole event's JSON (characters). */
  readonly eventChars: number;
  readonly truncated: boolean;
  readonly ctx: string;
  /** The `HookRecord` as JSON. */
  readonly record: string;
  /** A shadow candidate's `HookRecord` as JSON. */
  readonly shadow: string | null;
}

export interface StoredDecision extends Omit<DecisionRow, "at"> {
  readonly id: number;
  /** ISO 8601. */
  readonly at: string;
}

export interface DecisionQuery {
  readonly tenantId: TenantId;
  readonly point?: HookPoint;
  /** Only records at or after this time (ms since the epoch). */
  readonly since?: number;
  /** 1–100,000, default 100. */
  readonly limit?: number;
}

export interface PruneInput {
  readonly tenantId: TenantId;
  readonly before: number;
  readonly keep: number;
}

export const DEFAULT_LOG_SETTINGS: LogSettings = { sample: 1, mask: [], retainDays: 7, retain: 10_000 };
export const MAX_DECISION_LIMIT = 100_000;
export const MAX_MASK_RULES = 64;

const MASK_PATH = /^(event|ctx|result)(\.([^.*\s\p{Cc}\p{Cf}]{1,128}|\*)){1,32}$/u;

const invalid = (message: string) => new StoreError("invalid_input", message);

/** Validates log settings (the CLI's flags and the runtime's options name the same fields). */
export function checkLogSettings(value: LogSettings): LogSettings {
  const { sample, mask, retainDays, retain } = value;
  if (typeof sample !== "number" || !(sample > 0 && sample <= 1))
    throw invalid(`Invalid sample ${JSON.stringify(sample)}: use a share of runs above 0 and at most 1 (e.g. 0.1).`);
  if (!Array.isArray(mask) || mask.length > MAX_MASK_RULES)
    throw invalid(`Invalid mask: give at most ${MAX_MASK_RULES} paths.`);
  const rules = mask.map((rule: MaskRule) => {
    if (typeof rule?.path !== "string" || !MASK_PATH.test(rule.path))
      throw invalid(
        `Invalid mask path ${JSON.stringify(rule?.path)}: start with event., ctx. or result. and name keys with dots, * for every key or item (e.g. event.call.args.password).`,
      );
    if (rule.action !== "drop" && rule.action !== "hash")
      throw invalid(`Invalid mask action ${JSON.stringify(rule.action)}: use "drop" or "hash".`);
    return { path: rule.path, action: rule.action };
  });
  if (!Number.isInteger(retainDays) || retainDays < 1 || retainDays > 3650)
    throw invalid(`Invalid retainDays ${JSON.stringify(retainDays)}: use a whole number of days from 1 to 3650.`);
  if (!Number.isInteger(retain) || retain < 1 || retain > 1_000_000)
    throw invalid(`Invalid retain ${JSON.stringify(retain)}: use a record count from 1 to 1000000.`);
  return { sample, mask: rules, retainDays, retain };
}

export function checkLogSettingsInput(input: LogSettingsInput): LogSettingsInput {
  const tenantId = checkTenantId(input.tenantId);
  const by = checkBy(input.by);
  return { tenantId, by, settings: input.settings === null ? null : checkLogSettings(input.settings) };
}

/** Reads settings written by this store; damage means a damaged store. */
export function readLogSettings(json: string, tenantId: string): LogSettings {
  try {
    return checkLogSettings(JSON.parse(json) as LogSettings);
  } catch {
    throw new StoreError(
      "corrupt",
      `The stored decision-log settings of ${tenantId} do not validate: the store is damaged; turn the log off and on again.`,
    );
  }
}

/** A decision query after `checkDecisionQuery`: its tenant checked and its limit set. */
export type CheckedDecisionQuery = Required<Omit<DecisionQuery, "point" | "since">> & DecisionQuery;

export function checkDecisionQuery(query: DecisionQuery): CheckedDecisionQuery {
  const tenantId = checkTenantId(query.tenantId);
  const limit = query.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_DECISION_LIMIT)
    throw invalid(`Invalid limit ${limit}: use an integer from 1 to ${MAX_DECISION_LIMIT}.`);
  if (query.point !== undefined && !HOOK_POINT_NAMES.includes(query.point))
    throw invalid(`Invalid hook point ${JSON.stringify(query.point)}: use one of ${HOOK_POINT_NAMES.join(", ")}.`);
  if (query.since !== undefined && !Number.isFinite(query.since))
    throw invalid(`Invalid since ${JSON.stringify(query.since)}: use a time in ms since the epoch.`);
  return { ...query, tenantId, limit };
}

export function checkPrune(input: PruneInput): PruneInput {
  const tenantId = checkTenantId(input.tenantId);
  if (!Number.isFinite(input.before) || !Number.isSafeInteger(input.keep) || input.keep < 0)
    throw invalid("Invalid prune: `before` is a time in ms and `keep` a count from 0.");
  return { tenantId, before: input.before, keep: input.keep };
}

/** The audit's one-line description of a settings change. */
export function describeLogSettings(settings: LogSettings | null): string {
  if (settings === null) return "off";
  const mask = settings.mask.map((m) => `${m.action} ${m.path}`);
  return [`on sample ${settings.sample}`, ...mask, `retain ${settings.retainDays} d / ${settings.retain}`].join(", ");
}
