import { z } from "zod";
import type { DescribeOutcome, SandboxCost } from "./executor.js";
import { hookPointOfHandler } from "./hook-points.js";
import type { Failure } from "./outcome.js";
import { isToolPoint, MAX_TOOL_GLOB_CHARS, MAX_TOOL_GLOBS, ToolGlobs } from "./tool-matchers.js";

/** Most keys the guest lists of a `{ tools, handler }` object (it has two; a few more are named as typos). */
const MAX_FORM_KEYS = 8;

/**
 * One key of a default export as the guest saw it, read once: its `typeof`; for an object, its own keys and
 * the `typeof` of its `handler`, and for a tool handler (`toolCall`, `toolResult`, `toolInvalid`) its
 * `tools` copied (strings as they are, anything else as null, at most one item past the cap so the host
 * can say it was over; "not-an-array" for anything but an array). The `observe` object's keys likewise.
 */
const DescribedKey = z.strictObject({
  name: z.string().max(128),
  type: z.string().max(16),
  keys: z.array(z.string().max(128)).max(MAX_FORM_KEYS).optional(),
  handler: z.string().max(16).optional(),
  tools: z
    .union([
      z
        .array(
          z
            .string()
            .max(MAX_TOOL_GLOB_CHARS + 1)
            .nullable(),
        )
        .max(MAX_TOOL_GLOBS + 1),
      z.literal("not-an-array"),
    ])
    .optional(),
});

/** The guest prelude's answer to `describe`: the keys of the bundle's default export, as `DescribedKey`s. */
export const DescribeReply = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("described"),
    handlers: z.array(DescribedKey).max(64),
    observe: z.array(DescribedKey).max(64).optional(),
  }),
  z.strictObject({
    kind: z.literal("failed"),
    code: z.enum(["threw", "pending", "result_too_large", "invalid_result"]),
    message: z.string().max(4_096),
    logs: z.array(z.string()),
  }),
]);
export type DescribeReply = z.infer<typeof DescribeReply>;

/**
 * The longest describe reply the host parses: 2 × 64 keys of 128 characters with 8 keys each, and the
 * globs of the 2 × 3 tool handlers (65 of 129 characters), escaped, plus envelope.
 */
const MAX_DESCRIBE_REPLY_CHARS = 512 * 1024;

/** Handler keys of a default export (or of its `observe` object) and the globs of those written `{ tools, handler }`. */
export interface DescribedHandlers {
  readonly handlers: string[];
  /** Globs by handler key (`toolCall`), for the handlers that list `tools`. */
  readonly tools?: Record<string, string[]> | undefined;
}

export type ParsedDescribe =
  | ({ type: "described"; observe?: DescribedHandlers | undefined } & DescribedHandlers)
  | { type: "failed"; failure: Failure };

/**
 * Parses the prelude's describe reply: size-capped, validated with zod, and every key must hold a handler:
 * a function, or `{ tools, handler }` on a tool point (`tools` a list of `ToolGlob`s), and `observe` an
 * object of such handlers. Names are not checked against the hook points here; the bundler does that and
 * lists the valid names. Never throws.
 */
export function parseDescribeReply(reply: unknown): ParsedDescribe {
  if (typeof reply !== "string" || reply.length > MAX_DESCRIBE_REPLY_CHARS) {
    return invalid("The sandbox's describe reply is not a string of acceptable size");
  }
  let raw: unknown;
  try {
    raw = JSON.parse(reply);
  } catch {
    return invalid("The sandbox's describe reply is not JSON");
  }
  const parsed = DescribeReply.safeParse(raw);
  if (!parsed.success) return invalid("The sandbox's describe reply is malformed");
  const data = parsed.data;
  if (data.kind === "failed") return { type: "failed", failure: { code: data.code, message: data.message } };
  const decision = handlersOf(data.handlers, "");
  if (typeof decision === "string") return invalid(decision);
  if (data.observe === undefined) return { type: "described", ...decision };
  const observe = handlersOf(data.observe, "observe.");
  if (typeof observe === "string") return invalid(observe);
  if (observe.handlers.length === 0) return invalid("The default export's `observe` holds no handlers");
  return { type: "described", ...decision, observe };
}

function handlersOf(keys: readonly z.infer<typeof DescribedKey>[], prefix: string): DescribedHandlers | string {
  const handlers: string[] = [];
  const tools: Record<string, string[]> = {};
  for (const key of keys) {
    const name = `${prefix}${key.name}`;
    if (key.name === "observe" && prefix === "") {
      return `The default export's \`observe\` is a ${key.type}: it holds observe-only handlers, \`observe: { toolResult(event, ctx) { … } }\``;
    }
    if (key.type === "function") {
      handlers.push(key.name);
      continue;
    }
    if (key.type !== "object" || key.keys === undefined) {
      return `The default export's \`${name}\` is a ${key.type}, not a function: a hook module exports only handlers`;
    }
    const stray = key.keys.find((k) => k !== "handler" && k !== "tools");
    if (stray !== undefined) return `\`${name}\` has a key \`${stray}\`: a matched handler is \`{ tools, handler }\``;
    if (key.handler !== "function") {
      return `\`${name}.handler\` is ${key.handler === undefined ? "missing" : `a ${key.handler}`}, not a function`;
    }
    handlers.push(key.name);
    if (key.tools === undefined && !key.keys.includes("tools")) continue;
    const point = hookPointOfHandler(key.name);
    if (point === undefined) continue;
    if (!isToolPoint(point)) {
      return `\`${name}.tools\`: only toolCall, toolResult and toolInvalid handlers take tool matchers`;
    }
    const globs = ToolGlobs.safeParse(key.tools);
    if (!globs.success) return `\`${name}.tools\` is not a list of tool-name globs: ${globsProblem(globs.error)}`;
    tools[key.name] = globs.data;
  }
  return { handlers, tools };
}

function globsProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "invalid";
  const bounds = `1 to ${MAX_TOOL_GLOBS} globs of 1 to ${MAX_TOOL_GLOB_CHARS} characters`;
  if (issue.path.length === 0)
    return `${issue.code === "invalid_type" ? "not an array" : issue.message} (expected ${bounds})`;
  const what =
    issue.code === "invalid_type" ? `not a string of at most ${MAX_TOOL_GLOB_CHARS} characters` : issue.message;
  return `item ${issue.path.join(".")}: ${what} (expected ${bounds})`;
}

function invalid(message: string): ParsedDescribe {
  return { type: "failed", failure: { code: "invalid_result", message } };
}

/** A describe's reply (untrusted) as a `DescribeOutcome` with its cost: what both executors resolve with. */
export function describeOutcomeOf(reply: string, cost: SandboxCost): DescribeOutcome {
  const { cpuMs, runMs, queuedMs } = cost;
  return { ...parseDescribeReply(reply), cpuMs, runMs, queuedMs };
}
