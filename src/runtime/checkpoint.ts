import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { PausedRun } from "../agent/index.js";
import type { RunSnapshot } from "../dispatch/index.js";
import {
  AssistantMessage,
  BundleRef,
  FailureCode,
  HookId,
  JsonObject,
  JsonValue,
  MAX_REASON_CHARS,
  Message,
  ModelSettings,
  RunId,
  TenantId,
  ToolCall,
  ToolMessage,
  Usage,
} from "../protocol/index.js";
import { RuntimeError } from "./errors.js";

/**
 * A paused run, sealed: what `runAgent` returns when hooks asked for approval, and what `resumeAgent`
 * takes back. A JSON value: store it anywhere, resume it in another process or after a restart. `body` is
 * the run's state as JSON text (transcript, turn, each hook's `ctx.state`, budgets spent, the bundle
 * version, the pending calls); `mac` is its HMAC-SHA256 under the platform's checkpoint key, so a client
 * holding the checkpoint can read it but cannot change it: any change, a truncation, another key or another
 * format version is refused before anything in it is used.
 */
export interface Checkpoint {
  readonly type: "isohook.checkpoint";
  readonly version: typeof CHECKPOINT_VERSION;
  readonly body: string;
  /** base64url HMAC-SHA256 of the type, version and body. */
  readonly mac: string;
}

/**
 * The checkpoint key: at least 16 bytes (32 random bytes recommended); a string counts as its UTF-8 bytes.
 * While rotating, a list of up to 8 keys: the first seals new checkpoints, any of them opens one, so that
 * runs paused under the old key still resume; drop the old key once those are resumed or expired.
 */
export type CheckpointKey = string | Uint8Array | readonly (string | Uint8Array)[];

const MAX_KEYS = 8;

export const CHECKPOINT_VERSION = 1;
const TYPE = "isohook.checkpoint";
const MIN_KEY_BYTES = 16;
/** A checkpoint's body is refused above this, before its MAC is computed. */
export const MAX_CHECKPOINT_CHARS = 32 * 1024 * 1024;

const DecidedBy = z.strictObject({
  hookId: HookId,
  source: z.enum(["tenant", "platform"]),
  failure: FailureCode.exactOptional(),
});
const Reason = z.string().min(1).max(MAX_REASON_CHARS);
const Pending = z.strictObject({
  callId: z.string().min(1),
  call: ToolCall,
  args: JsonObject,
  reason: Reason,
  question: Reason.exactOptional(),
  by: DecidedBy,
  turn: z.int().nonnegative(),
  index: z.int().nonnegative(),
});
const Count = z.int().nonnegative();

/** The body of a checkpoint: checked again after its MAC (a format check, not a trust decision). */
export const CheckpointBody = z.strictObject({
  /** Unique per checkpoint: a runtime refuses to resume the same one twice. */
  id: z.uuid(),
  createdAt: z.iso.datetime(),
  /** After this the checkpoint is refused (`checkpoint_expired`); absent: `createdAt` + the default TTL. */
  expiresAt: z.iso.datetime().exactOptional(),
  tenantId: TenantId,
  runId: RunId,
  /** The bundle version the run used; the resumed run uses it again, whatever is active by then. */
  bundle: BundleRef.nullable(),
  policy: z.record(z.string(), z.enum(["closed", "open"])),
  options: z.strictObject({ maxTurns: z.int().min(1), parallelToolCalls: z.boolean(), settings: ModelSettings }),
  loop: z.strictObject({
    turn: Count,
    transcript: z.array(Message),
    turns: Count,
    usage: Usage,
    output: z.string(),
    modelCalls: Count,
    batch: z.strictObject({
      message: AssistantMessage,
      results: z.array(ToolMessage.nullable()),
      pending: z.array(Pending).min(1),
      terminate: z.strictObject({ reason: z.string(), by: DecidedBy.optional() }).optional(),
    }),
  }),
  hooks: z.strictObject({
    turn: Count,
    spent: z.strictObject({ turnMs: z.number().nonnegative(), runMs: z.number().nonnegative() }),
    states: z.record(z.string(), JsonObject),
  }),
  /** The host's own data for the resume (e.g. which scenario), sealed with the rest. */
  meta: JsonValue,
});
export type CheckpointBody = z.infer<typeof CheckpointBody>;

export interface SealInput {
  readonly tenantId: TenantId;
  readonly runId: RunId;
  readonly bundle: BundleRef | undefined;
  readonly policy: Readonly<Record<string, "closed" | "open">>;
  readonly options: CheckpointBody["options"];
  readonly loop: PausedRun;
  readonly hooks: RunSnapshot;
  readonly meta: JsonValue;
  /** How long the checkpoint can be resumed: default `DEFAULT_CHECKPOINT_TTL_MS`. */
  readonly ttlMs?: number;
}

/** How long a checkpoint can be resumed unless the runtime or the run says otherwise: 7 days. */
export const DEFAULT_CHECKPOINT_TTL_MS = 7 * 24 * 3_600_000;

/** Seals a paused run with the key. */
export function sealCheckpoint(input: SealInput, key: CheckpointKey, now = Date.now()): Checkpoint {
  const body = JSON.stringify({
    id: randomUUID(),
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + (input.ttlMs ?? DEFAULT_CHECKPOINT_TTL_MS)).toISOString(),
    tenantId: input.tenantId,
    runId: input.runId,
    bundle: input.bundle ?? null,
    policy: input.policy,
    options: input.options,
    loop: input.loop,
    hooks: input.hooks,
    meta: input.meta,
  });
  const [sealing] = checkpointKeys(key);
  return { type: TYPE, version: CHECKPOINT_VERSION, body, mac: mac(sealing as Buffer, CHECKPOINT_VERSION, body) };
}

/**
 * Checks a checkpoint's MAC with the key (constant-time) and returns its body. Throws `RuntimeError`:
 * `invalid_checkpoint` (not a checkpoint at all), `checkpoint_version` (another format version),
 * `checkpoint_tampered` (changed, truncated, or sealed with another key).
 */
export function openCheckpoint(checkpoint: unknown, key: CheckpointKey): CheckpointBody {
  const keys = checkpointKeys(key);
  if (typeof checkpoint !== "object" || checkpoint === null || Array.isArray(checkpoint))
    throw invalid("Expected a checkpoint object {type, version, body, mac}");
  const { type, version, body, mac: given } = checkpoint as Record<string, unknown>;
  if (type !== TYPE)
    throw invalid(`Expected a checkpoint (type "${TYPE}"), got type ${JSON.stringify(type) ?? "none"}`);
  if (version !== CHECKPOINT_VERSION) {
    throw new RuntimeError(
      "checkpoint_version",
      `This checkpoint has format version ${JSON.stringify(version) ?? "none"}; this isohook resumes version ${CHECKPOINT_VERSION} only: resume it with the isohook that made it`,
    );
  }
  if (typeof body !== "string" || typeof given !== "string") throw invalid("Expected `body` and `mac` to be strings");
  if (body.length > MAX_CHECKPOINT_CHARS) throw invalid(`The checkpoint is over ${MAX_CHECKPOINT_CHARS} characters`);
  const actual = Buffer.from(given, "base64url");
  // Every key is tried, each compared in constant time: which key matched is not told by the time taken.
  let matched = false;
  for (const bytes of keys) {
    const expected = Buffer.from(mac(bytes, version, body), "base64url");
    if (actual.length === expected.length && timingSafeEqual(actual, expected)) matched = true;
  }
  if (!matched) {
    throw new RuntimeError(
      "checkpoint_tampered",
      "The checkpoint does not match its MAC: it was changed or truncated, or sealed with another checkpoint key. Nothing in it was used; resume the checkpoint exactly as runAgent returned it, with the key that sealed it",
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw invalid("The checkpoint's body is not JSON");
  }
  const parsed = CheckpointBody.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(
      `The checkpoint's body does not fit format ${CHECKPOINT_VERSION}: ${issue?.path.join(".")}: ${issue?.message}`,
    );
  }
  return parsed.data;
}

/**
 * The key, or each key of a list (the sealing one first), as bytes; throws `RuntimeError` `invalid_options`
 * when a key is too short or not a key, or the list is empty or longer than 8.
 */
export function checkpointKeys(key: CheckpointKey): readonly Buffer[] {
  const keys = typeof key === "string" || key instanceof Uint8Array ? [key] : Array.isArray(key) ? key : undefined;
  if (keys === undefined || keys.length === 0 || keys.length > MAX_KEYS) {
    throw new RuntimeError(
      "invalid_options",
      `Expected \`checkpointKey\` to be a key (a string or bytes) or a list of 1–${MAX_KEYS} keys while rotating (the first seals), got ${keys === undefined ? typeof key : `a list of ${keys.length}`}`,
    );
  }
  return keys.map((one: unknown) => {
    const bytes =
      typeof one === "string" ? Buffer.from(one, "utf8") : one instanceof Uint8Array ? Buffer.from(one) : undefined;
    if (bytes === undefined || bytes.length < MIN_KEY_BYTES) {
      throw new RuntimeError(
        "invalid_options",
        `Expected \`checkpointKey\` to be a string or bytes of at least ${MIN_KEY_BYTES} bytes (32 random bytes recommended), got ${bytes === undefined ? typeof one : `${bytes.length} bytes`}`,
      );
    }
    return bytes;
  });
}

/** When the checkpoint expires, in milliseconds since the epoch. */
export function checkpointExpiry(body: Pick<CheckpointBody, "createdAt" | "expiresAt">): number {
  return body.expiresAt === undefined
    ? Date.parse(body.createdAt) + DEFAULT_CHECKPOINT_TTL_MS
    : Date.parse(body.expiresAt);
}

/** Checks a checkpoint's TTL option: whole milliseconds, from one second to one year. */
export function checkCheckpointTtl(ttlMs: unknown, name: string): void {
  if (typeof ttlMs !== "number" || !Number.isInteger(ttlMs) || ttlMs < 1_000 || ttlMs > 365 * 24 * 3_600_000) {
    throw new RuntimeError(
      "invalid_options",
      `Expected \`${name}\` to be whole milliseconds from 1000 (one second) to 31536000000 (a year), got \`${String(ttlMs)}\``,
    );
  }
}

function mac(key: Buffer, version: number, body: string): string {
  return createHmac("sha256", key).update(`${TYPE}\n${version}\n`).update(body).digest("base64url");
}

function invalid(message: string): RuntimeError {
  return new RuntimeError("invalid_checkpoint", message);
}
