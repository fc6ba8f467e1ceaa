import type { LimitsInput } from "../protocol/index.js";
import { integerFlag, type OptionSpec, type ParsedArgs } from "./command.js";

/** `--timeout <ms>` and `--memory <mb>`, for commands that run hooks in the sandbox. */
export const LIMITS_OPTIONS: OptionSpec = { timeout: { type: "string" }, memory: { type: "string" } };

/** The sandbox limits given by `--timeout` (1-60000 ms) and `--memory` (8-2048 MB); the rest default. */
export function limitsOf(args: ParsedArgs): LimitsInput {
  const limits: LimitsInput = {};
  const timeoutMs = integerFlag(args, "timeout", 1, 60_000);
  const memoryMb = integerFlag(args, "memory", 8, 2_048);
  if (timeoutMs !== undefined) limits.timeoutMs = timeoutMs;
  if (memoryMb !== undefined) limits.memoryMb = memoryMb;
  return limits;
}
