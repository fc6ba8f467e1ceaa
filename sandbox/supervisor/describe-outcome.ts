import { type DescribeOutcome, parseDescribeReply } from "../../src/protocol/index.js";

/** The worker's describe reply (the prelude's `DescribeReply`, untrusted) as a `DescribeOutcome`. */
export function describeOutcomeOf(reply: string, cpuMs: number, durationMs: number, queuedMs: number): DescribeOutcome {
  const parsed = parseDescribeReply(reply);
  return parsed.type === "described"
    ? { type: "described", handlers: parsed.handlers, cpuMs, durationMs, queuedMs }
    : { type: "failed", failure: parsed.failure, cpuMs, durationMs, queuedMs };
}
