import { z } from "zod";
import type { DescribeOutcome, SandboxCost } from "./executor.js";
import type { Failure } from "./outcome.js";

/** The guest prelude's answer to `describe`: the keys of the bundle's default export and their `typeof`. */
export const DescribeReply = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("described"),
    handlers: z.array(z.strictObject({ name: z.string().max(128), type: z.string().max(16) })).max(64),
  }),
  z.strictObject({
    kind: z.literal("failed"),
    code: z.enum(["threw", "pending", "result_too_large", "invalid_result"]),
    message: z.string().max(4_096),
    logs: z.array(z.string()),
  }),
]);
export type DescribeReply = z.infer<typeof DescribeReply>;

/** The longest describe reply the host parses: 64 keys of 128 characters, escaped, plus envelope. */
const MAX_DESCRIBE_REPLY_CHARS = 64 * 1024;

export type ParsedDescribe = { type: "described"; handlers: string[] } | { type: "failed"; failure: Failure };

/**
 * Parses the prelude's describe reply: size-capped, validated with zod, and every key must hold a function
 * (a hook module exports only handlers). Names are not checked against the hook points here; the bundler
 * does that and lists the valid names. Never throws.
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
  const handlers: string[] = [];
  for (const { name, type } of data.handlers) {
    if (type !== "function") {
      return invalid(
        `The default export's \`${name}\` is a ${type}, not a function: a hook module exports only handlers`,
      );
    }
    handlers.push(name);
  }
  return { type: "described", handlers };
}

function invalid(message: string): ParsedDescribe {
  return { type: "failed", failure: { code: "invalid_result", message } };
}

/** A describe's reply (untrusted) as a `DescribeOutcome` with its cost: what both executors resolve with. */
export function describeOutcomeOf(reply: string, cost: SandboxCost): DescribeOutcome {
  const { cpuMs, runMs, queuedMs } = cost;
  return { ...parseDescribeReply(reply), cpuMs, runMs, queuedMs };
}
