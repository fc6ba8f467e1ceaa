import { z } from "zod";
import { HOOK_POINTS, type HookPoint, type HookResult } from "./hook-points.js";
import { JsonObject } from "./json.js";
import type { Limits } from "./limits.js";
import { type Failure, type HookOutcome, MAX_STACK_FRAMES, type ResultIssue, type StackFrame } from "./outcome.js";

/**
 * The one JSON string the guest prelude returns per call. The prelude builds it with `JSON.stringify`
 * inside the isolate and caps its length there; the host re-checks the length before parsing anything.
 */
export const GuestReply = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("returned"),
    // Validated once, by the point's own result schema: walking it here too doubled the cost of a reply.
    result: z.unknown(),
    state: JsonObject.optional(),
    logs: z.array(z.string()),
  }),
  z.strictObject({
    kind: z.literal("failed"),
    code: z.enum(["threw", "pending", "result_too_large", "invalid_result"]),
    message: z.string().max(4_096),
    /** The thrown error's `stack` as the guest saw it (capped there): parsed here for bundle positions only. */
    stack: z.string().max(4_096).optional(),
    logs: z.array(z.string()),
  }),
]);
export type GuestReply = z.infer<typeof GuestReply>;

/** Room for the envelope around result, state and logs. */
const REPLY_OVERHEAD = 1_024;

/** The longest reply string the host will parse under these limits. */
export function maxReplyChars(limits: Pick<Limits, "maxResultChars" | "maxStateChars" | "maxLogChars">): number {
  return limits.maxResultChars + limits.maxStateChars + limits.maxLogChars + REPLY_OVERHEAD;
}

/**
 * Parses the guest's reply string for `point` into a typed outcome: size-capped before parsing, the
 * envelope and then the point's result schema validated with zod, issues kept. Never throws. This is the
 * only function that turns guest output into host values.
 */
export function parseGuestReply<P extends HookPoint>(point: P, reply: unknown, limits: Limits): HookOutcome<P> {
  if (typeof reply !== "string")
    return failed("invalid_result", `The hook's reply was a ${typeof reply}, not a string`, []);
  if (reply.length > maxReplyChars(limits)) {
    return failed(
      "result_too_large",
      `The hook's reply is ${reply.length} characters, over the ${maxReplyChars(limits)} limit`,
      [],
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(reply);
  } catch {
    return failed("invalid_result", "The hook's reply is not JSON", []);
  }
  try {
    if (mayHideProtoKey(reply)) dropNestedProtoKeys(raw);
    return validateReply(point, raw);
  } catch (error) {
    // Guest output must never throw here (e.g. a custom check or a schema hitting a stack limit).
    const why = error instanceof RangeError ? "is nested too deeply to validate" : "could not be validated";
    return failed("invalid_result", `The hook's reply ${why}`, []);
  }
}

function validateReply<P extends HookPoint>(point: P, raw: unknown): HookOutcome<P> {
  const envelope = GuestReply.safeParse(raw);
  if (!envelope.success)
    return failed("invalid_result", "The hook's reply envelope is malformed", [], envelope.error.issues);
  const guest = envelope.data;
  if (guest.kind === "failed") {
    const outcome = failed<P>(guest.code, guest.message, guest.logs);
    const stack = guest.stack === undefined ? [] : bundleFrames(guest.stack);
    if (outcome.type === "failed" && stack.length > 0) outcome.failure.stack = stack;
    return outcome;
  }
  if (guest.result === null) return { type: "decided", result: null, state: guest.state, logs: guest.logs };
  const parsed = HOOK_POINTS[point].result.safeParse(guest.result);
  if (!parsed.success) {
    return failed(
      "invalid_result",
      `The hook returned a result that ${point} does not accept`,
      guest.logs,
      parsed.error.issues,
    );
  }
  // The cast only re-links the generic: `parsed` is the output of P's own schema.
  return { type: "decided", result: parsed.data as HookResult<P>, state: guest.state, logs: guest.logs };
}

/**
 * `JSON.parse` makes a `__proto__` key an own data property: harmless until some code copies it with
 * assignment (`Object.assign`, `target[key] = …`), which would set a prototype instead. Inside result and
 * state such keys are dropped; on the envelope itself one stays, so the strict envelope schema refuses it.
 * The walk runs only when the text could spell the key (directly or escaped).
 */
function mayHideProtoKey(text: string): boolean {
  return text.includes("__proto__") || text.includes("\\u");
}

function dropNestedProtoKeys(root: unknown): void {
  if (typeof root !== "object" || root === null) return;
  const pending: object[] = Object.values(root).filter(isObject);
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    if (Object.hasOwn(item, "__proto__")) Reflect.deleteProperty(item, "__proto__");
    for (const value of Object.values(item)) if (isObject(value)) pending.push(value);
  }
}

function isObject(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}

function failed<P extends HookPoint>(
  code: Failure["code"],
  message: string,
  logs: string[],
  issues?: readonly z.core.$ZodIssue[],
): HookOutcome<P> {
  const failure: Failure = { code, message };
  if (issues) failure.issues = issues.slice(0, 20).map(toResultIssue);
  return { type: "failed", failure, logs };
}

/** `    at toolCall (bundle:sha256-…:12:7)` or `    at bundle:sha256-…:3:1`: a frame in the tenant's bundle. */
const BUNDLE_FRAME = /^\s*at (?:(.{1,200}?) \()?bundle:[^\s():]{0,80}:(\d{1,7}):(\d{1,7})\)?$/;

/**
 * The frames of a guest stack that point into the bundle (the isolate names its script `bundle:<hash>`),
 * at most MAX_STACK_FRAMES. Anything else (the prelude, native frames, text a hook forged) is dropped: a
 * frame can only ever name a position in the tenant's own bundle.
 */
function bundleFrames(stack: string): StackFrame[] {
  const frames: StackFrame[] = [];
  for (const line of stack.split("\n", 64)) {
    const match = BUNDLE_FRAME.exec(line);
    if (match === null) continue;
    const frame: StackFrame = { file: "bundle", line: Number(match[2]), column: Number(match[3]) };
    // A function name is the tenant's text: printable ASCII only (it may reach a terminal).
    if (match[1] !== undefined) frame.name = match[1].replace(/[^\x20-\x7e]/g, "?");
    frames.push(frame);
    if (frames.length === MAX_STACK_FRAMES) break;
  }
  return frames;
}

function toResultIssue(issue: z.core.$ZodIssue): ResultIssue {
  return { path: issue.path.map((k) => (typeof k === "symbol" ? String(k) : k)), message: issue.message };
}
