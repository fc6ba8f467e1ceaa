import { closestName, HOOK_POINT_NAMES, type HookPoint, handlerOf, hookPointOfHandler } from "../protocol/index.js";
import type { BundleProblem } from "./bundle-error.js";

export interface CheckedHandlers {
  /** The hook points of the known keys, in protocol order. */
  readonly hookPoints: HookPoint[];
  /** One per unknown key, listing the valid names. */
  readonly unknown: BundleProblem[];
}

const VALID = HOOK_POINT_NAMES.map(handlerOf);

/**
 * Checks a default export's keys: each must be a handler name (`toolCall`, the camelCase of `tool.call`).
 * (That each holds a function the sandbox checks: `parseDescribeReply`.) Near-misses of case or format
 * (`toolcall`, `tool.call`, `ToolCall`, `tool_call`) and one- or two-letter typos get a did-you-mean.
 */
export function checkHandlers(keys: readonly string[], prefix = ""): CheckedHandlers {
  const hookPoints = new Set<HookPoint>();
  const unknown: BundleProblem[] = [];
  for (const key of keys) {
    const point = hookPointOfHandler(key);
    if (point !== undefined) {
      hookPoints.add(point);
      continue;
    }
    const guess = suggestHandler(key);
    const hint = guess === undefined ? "" : ` (did you mean \`${guess}\`?)`;
    unknown.push({
      message: `Unknown handler \`${prefix}${key}\`${hint}. Valid handlers: ${VALID.join(", ")}${prefix === "" ? ", observe" : ""}.`,
    });
  }
  return { hookPoints: HOOK_POINT_NAMES.filter((p) => hookPoints.has(p)), unknown };
}

/** The valid handler name `key` most likely meant, if any is close. */
export function suggestHandler(key: string): string | undefined {
  return closestName(key, VALID, { normalize });
}

/** Case and separators do not count: `Tool.Call`, `tool_call` and `toolcall` all become `toolcall`. */
function normalize(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, "");
}
