import { defineHooks } from "isohook/hook-sdk";

interface Config {
  /** Text the final answer must contain. */
  readonly require: string;
  /** Nudges per run before the hook lets an incomplete answer through. */
  readonly maxNudges: number;
}

function configOf(raw: unknown): Config {
  const config = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const require = typeof config.require === "string" && config.require !== "" ? config.require : "Summary:";
  const nudges = config.maxNudges;
  return { require, maxNudges: typeof nudges === "number" && Number.isInteger(nudges) && nudges >= 0 ? nudges : 2 };
}

/**
 * Keeps the agent working until its answer is complete: on a turn without tool calls whose text lacks
 * `config.require` (default `Summary:`), `turn.end` → `continue` with feedback, at most `config.maxNudges`
 * times per run (default 2, counted in `ctx.state`) so a stubborn model cannot loop forever.
 */
export default defineHooks({
  turnEnd(event, ctx) {
    if ((event.message.toolCalls ?? []).length > 0) return undefined;
    const { require, maxNudges } = configOf(ctx.config);
    if (event.message.content.includes(require)) return undefined;
    const nudges = typeof ctx.state.nudges === "number" ? ctx.state.nudges : 0;
    if (nudges >= maxNudges) return undefined;
    ctx.state.nudges = nudges + 1;
    return { type: "continue", message: `Your answer is not finished: end it with a line starting with "${require}".` };
  },
});
