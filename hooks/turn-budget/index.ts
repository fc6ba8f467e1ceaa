import { defineHooks } from "isohook/hook-sdk";

function maxTurnsOf(config: unknown): number {
  if (typeof config === "object" && config !== null && !Array.isArray(config)) {
    const maxTurns = (config as { maxTurns?: unknown }).maxTurns;
    if (typeof maxTurns === "number" && Number.isInteger(maxTurns) && maxTurns > 0) return maxTurns;
  }
  return 5;
}

/**
 * Ends the run gracefully once it has used `config.maxTurns` turns (default 5): `turn.end` → `end`, so the
 * run completes with the work so far instead of being cut off by the platform's hard limit.
 */
export default defineHooks({
  turnEnd(event, ctx) {
    const maxTurns = maxTurnsOf(ctx.config);
    if (event.turn < maxTurns) return undefined;
    return { type: "end", reason: `turn budget of ${maxTurns} turns spent` };
  },
});
