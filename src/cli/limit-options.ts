import type { LimitsInput } from "../protocol/index.js";
import { integerFlag, type OptionSpec, type ParsedArgs } from "./command.js";

/** `--timeout <ms>` and `--memory <mb>`: the sandbox limits of commands that run hooks (test, upload). */
export const LIMIT_OPTIONS: OptionSpec = { timeout: { type: "string" }, memory: { type: "string" } };

export const LIMITS_HELP = `  --timeout <ms>     Per-call timeout, 1-60000 (default 50)
  --memory <mb>      Isolate memory limit, 8-2048 (default 32)`;

/** The limits the flags ask for; only the given ones are set (the rest keep their defaults). */
export function limitsOf(args: ParsedArgs): LimitsInput {
  const limits: LimitsInput = {};
  const timeoutMs = integerFlag(args, "timeout", 1, 60_000);
  const memoryMb = integerFlag(args, "memory", 8, 2_048);
  if (timeoutMs !== undefined) limits.timeoutMs = timeoutMs;
  if (memoryMb !== undefined) limits.memoryMb = memoryMb;
  return limits;
}
