import { z } from "zod";
import { describeValue } from "../protocol/index.js";
import { checkLogSettings, DEFAULT_LOG_SETTINGS, type LogSettings, type MaskRule } from "../store/index.js";

/** Options of the decision log's writer. Defaults in brackets. */
export interface LogOptions {
  /**
   * Log every tenant that has no settings of its own in the store, with these (fields default to
   * `sample` 1, no mask, 7 days, 10,000 records). A tenant's own settings (`isohook log`) win.
   */
  readonly all?: Partial<LogSettings> | undefined;
  /** Entries the buffer holds before it drops [10,000]. */
  readonly bufferSize?: number;
  /** Characters of event and ctx JSON the buffer holds before it drops [64 Mi]. */
  readonly bufferChars?: number;
  /** Entries per store write [500]. */
  readonly batchSize?: number;
  /** How long an entry waits for its batch [200 ms]. */
  readonly flushMs?: number;
  /** How long a batch the store could not take (unreachable, busy) waits before it is written again [1000 ms]. */
  readonly retryMs?: number;
  /** How often tenants' settings are re-read from the store [1000 ms]. */
  readonly refreshMs?: number;
  /** How often a tenant's retention is applied, at most [30 s]: its log may pass `retain` by that long's records. */
  readonly pruneMs?: number;
  /** Events longer than this are stored truncated and marked [65,536 characters]. */
  readonly maxEventChars?: number;
  readonly clock?: () => number;
  /** Told of every drop: a failed batch at once, a full buffer's drops at most once per `flushMs` (never per entry). */
  readonly onDropped?: (event: DecisionsDroppedEvent) => void;
}

/**
 * Decision-log entries dropped: `full`, the buffer was full (the store is slower than the calls, or down);
 * `failed`, the store refused a batch for good, or was still unreachable at a flush or close (a batch the
 * store cannot take for a moment is written again, not dropped). Also counted in `DecisionLog.stats()`.
 */
export interface DecisionsDroppedEvent {
  readonly type: "decisionlog.dropped";
  readonly reason: "full" | "failed";
  readonly count: number;
}

export interface ResolvedLogOptions {
  readonly all: LogSettings | undefined;
  readonly bufferSize: number;
  readonly bufferChars: number;
  readonly batchSize: number;
  readonly flushMs: number;
  readonly retryMs: number;
  readonly refreshMs: number;
  readonly pruneMs: number;
  readonly maxEventChars: number;
  readonly clock: () => number;
  readonly onDropped: ((event: DecisionsDroppedEvent) => void) | undefined;
}

const int = (name: string, min: number, max: number, fallback: number) =>
  z
    .custom<number>((v) => Number.isInteger(v) && (v as number) >= min && (v as number) <= max, {
      error: (issue) =>
        `Expected \`${name}\` to be an integer from ${min} to ${max}, got \`${describeValue(issue.input)}\``,
    })
    .default(fallback);

const Mask = z.array(
  z.strictObject(
    { path: z.string(), action: z.enum(["drop", "hash"]) },
    { error: "Expected each mask rule to be {path, action}" },
  ),
);

const Schema = z.strictObject({
  all: z
    .strictObject({
      sample: z.number().optional(),
      mask: Mask.optional(),
      retainDays: z.number().optional(),
      retain: z.number().optional(),
    })
    .optional(),
  bufferSize: int("bufferSize", 1, 10_000_000, 10_000),
  bufferChars: int("bufferChars", 1, 2 ** 31, 64 * 1024 * 1024),
  batchSize: int("batchSize", 1, 100_000, 500),
  flushMs: int("flushMs", 1, 60_000, 200),
  retryMs: int("retryMs", 1, 600_000, 1_000),
  refreshMs: int("refreshMs", 10, 3_600_000, 1_000),
  pruneMs: int("pruneMs", 0, 3_600_000, 30_000),
  maxEventChars: int("maxEventChars", 1, 16 * 1024 * 1024, 65_536),
  clock: z
    .custom<() => number>((v) => typeof v === "function", { error: "Expected `clock` to be a function" })
    .default(() => Date.now),
  onDropped: z
    .custom<(event: DecisionsDroppedEvent) => void>((v) => typeof v === "function", {
      error: "Expected `onDropped` to be a function",
    })
    .optional(),
});

/** Validates the options; throws a `TypeError` naming the first bad one. */
export function parseLogOptions(options: LogOptions): ResolvedLogOptions {
  const parsed = Schema.safeParse(options ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.map(String).join(".") ?? "";
    const message = issue?.message ?? "invalid";
    throw new TypeError(
      `Invalid decision-log options: ${message.includes("`") || path === "" ? message : `\`${path}\`: ${message}`}`,
    );
  }
  const { all, ...rest } = parsed.data;
  return {
    ...rest,
    onDropped: rest.onDropped,
    all: all === undefined ? undefined : allSettings(all as Partial<LogSettings>),
  };
}

function allSettings(all: Partial<LogSettings>): LogSettings {
  try {
    return checkLogSettings({ ...DEFAULT_LOG_SETTINGS, ...all, mask: (all.mask ?? []) as MaskRule[] });
  } catch (error) {
    throw new TypeError(
      `Invalid decision-log options: in \`all\`: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
