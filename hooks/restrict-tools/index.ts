import { defineHooks } from "isohook/hook-sdk";

interface Config {
  /** Tool names the model may see; others are hidden from it. Absent: every tool. */
  readonly allow: readonly string[] | undefined;
  /** Tool calls executed per turn; further calls in the turn are blocked. */
  readonly maxCallsPerTurn: number;
}

function configOf(raw: unknown): Config {
  const config = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const allow = Array.isArray(config.allow)
    ? config.allow.filter((n): n is string => typeof n === "string")
    : undefined;
  const max = config.maxCallsPerTurn;
  return { allow, maxCallsPerTurn: typeof max === "number" && Number.isInteger(max) && max >= 0 ? max : 3 };
}

/**
 * Restricts what the model may do: `tools.prepare` hides every tool not in `config.allow`, and `tool.call`
 * blocks calls past `config.maxCallsPerTurn` (default 3) in one turn, counting in `ctx.state`.
 */
export default defineHooks({
  toolsPrepare(event, ctx) {
    const { allow } = configOf(ctx.config);
    if (allow === undefined) return undefined;
    return { type: "restrict", allow: event.tools.map((t) => t.name).filter((name) => allow.includes(name)) };
  },
  toolCall(_event, ctx) {
    const { maxCallsPerTurn } = configOf(ctx.config);
    const state = ctx.state;
    const calls = state.turn === ctx.turn && typeof state.calls === "number" ? state.calls : 0;
    state.turn = ctx.turn;
    state.calls = calls + 1;
    if (calls < maxCallsPerTurn) return undefined;
    return { type: "block", reason: `at most ${maxCallsPerTurn} tool calls per turn; try again next turn` };
  },
});
