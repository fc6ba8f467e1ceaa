import { suggestHandler } from "../bundler/index.js";
import { closestName, HOOK_POINT_NAMES, type HookPoint, hookPointOfHandler, isHookPoint } from "../protocol/index.js";
import { UsageError } from "./command.js";

/**
 * A hook point's name from the command line, checked: an unknown one is a usage error with a did-you-mean
 * (a handler name such as `onToolCall` suggests its point). `where` names the flag it came from.
 */
export function hookPointOf(raw: string, where?: string): HookPoint {
  if (isHookPoint(raw)) return raw;
  const guess =
    hookPointOfHandler(raw) ?? hookPointOfHandler(suggestHandler(raw) ?? "") ?? closestName(raw, HOOK_POINT_NAMES);
  const hint = guess === undefined ? "" : ` (did you mean \`${guess}\`?)`;
  throw new UsageError(
    `Unknown hook point \`${raw}\`${where === undefined ? "" : ` in ${where}`}${hint}. Valid hook points: ${HOOK_POINT_NAMES.join(", ")}`,
  );
}
