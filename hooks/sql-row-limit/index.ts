import { defineHooks } from "isohook/hook-sdk";

/** Tools that take a SQL statement as `query`. */
const SQL_TOOLS = new Set(["sql", "query", "run_sql"]);

function maxRowsOf(config: unknown): number {
  if (typeof config === "object" && config !== null && !Array.isArray(config)) {
    const maxRows = (config as { maxRows?: unknown }).maxRows;
    if (typeof maxRows === "number" && Number.isInteger(maxRows) && maxRows > 0) return maxRows;
  }
  return 100;
}

const READ = /^\s*(?:select|with)\b/i;
/** Words of statements that write or change the schema, anywhere (a WITH may wrap a DELETE; `;` may chain one). */
const WRITE = /\b(?:insert|update|delete|merge|upsert|drop|alter|create|truncate|grant|revoke|copy|attach|pragma)\b/i;
const LIMIT = /\blimit\s+(\d+)\s*;?\s*$/i;

/**
 * Keeps SQL read-only and bounded: statements other than SELECT/WITH are blocked, a SELECT without a
 * LIMIT gets `LIMIT <maxRows>` (config `maxRows`, default 100), a larger LIMIT is lowered to it.
 */
export default defineHooks({
  toolCall(event, ctx) {
    if (!SQL_TOOLS.has(event.call.name)) return undefined;
    const query = event.call.args.query;
    if (typeof query !== "string") return undefined;
    if (!READ.test(query) || WRITE.test(query))
      return { type: "block", reason: "only read-only SELECT statements are allowed" };
    const maxRows = maxRowsOf(ctx.config);
    const limit = LIMIT.exec(query);
    if (limit && Number(limit[1]) <= maxRows) return undefined;
    const base = (limit ? query.slice(0, limit.index) : query).replace(/[\s;]+$/, "");
    return { type: "rewrite", args: { ...event.call.args, query: `${base} LIMIT ${maxRows}` } };
  },
});
