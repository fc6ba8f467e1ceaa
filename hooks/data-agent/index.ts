import { defineHooks } from "isohook/hook-sdk";
import keepWorking from "../keep-working/index.js";
import restrictTools from "../restrict-tools/index.js";
import sqlRowLimit from "../sql-row-limit/index.js";
import turnBudget from "../turn-budget/index.js";

/**
 * A tenant policy for a data-analysis agent, composed from four example hooks into one bundle: only the
 * tools in `config.allow` are offered and at most `config.maxCallsPerTurn` run per turn; SQL is read-only
 * and capped at `config.maxRows`; the final answer must contain `config.require`; the run ends after
 * `config.maxTurns` turns. Within one point the first hook that decides wins (the budget before the nudge).
 */
export default defineHooks({
  toolsPrepare(event, ctx) {
    return restrictTools.toolsPrepare?.(event, ctx);
  },
  async toolCall(event, ctx) {
    return (await restrictTools.toolCall?.(event, ctx)) ?? (await sqlRowLimit.toolCall?.(event, ctx));
  },
  async turnEnd(event, ctx) {
    return (await turnBudget.turnEnd?.(event, ctx)) ?? (await keepWorking.turnEnd?.(event, ctx));
  },
});
