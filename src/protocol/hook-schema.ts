import { z } from "zod";
import { HOOK_POINT_NAMES, HOOK_POINTS, type HookPoint, handlerOf } from "./hook-points.js";
import { type JsonSchema, toJsonSchema } from "./json.js";

/** One point as a schema object: `{ event, result }`, titled with its handler name. */
function pointSchema(point: HookPoint) {
  const { event, result } = HOOK_POINTS[point];
  return z.strictObject({ event, result }).meta({
    title: point,
    description: `Handler \`${handlerOf(point)}(event, ctx)\` receives \`event\` and returns one of \`result\` or nothing (the no-op).`,
  });
}

/**
 * The JSON Schema document for one hook point or all of them. One document (not one per schema) so the
 * recursive JSON value type is defined once in `$defs` and every `$ref` resolves from the root.
 */
export function hookSchema(point?: HookPoint): JsonSchema {
  if (point !== undefined) return toJsonSchema(pointSchema(point));
  const all = z
    .strictObject(Object.fromEntries(HOOK_POINT_NAMES.map((p) => [p, pointSchema(p)])))
    .meta({ title: "isohook hook points", description: "Every hook point's event and results, keyed by point." });
  return toJsonSchema(all);
}
