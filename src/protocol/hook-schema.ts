import { z } from "zod";
import { HOOK_POINT_NAMES, HOOK_POINTS, type HookPoint, handlerOf } from "./hook-points.js";
import { type JsonSchema, toJsonSchema } from "./json.js";
import { isToolPoint, ToolGlobs } from "./tool-matchers.js";

const observeText = (handler: string) =>
  ` An observe-only handler of the point (\`observe: { ${handler}(event, ctx) { … } }\`) receives the same event after the point decided; what it returns is ignored.`;

/**
 * One point as a schema object: `{ event, result }`, titled with its handler name; at a tool point also
 * `tools`, the globs of the `{ tools, handler }` form.
 */
function pointSchema(point: HookPoint) {
  const { event, result } = HOOK_POINTS[point];
  const handler = handlerOf(point);
  const returns = `Handler \`${handler}(event, ctx)\` receives \`event\` and returns one of \`result\` or nothing (the no-op).`;
  if (!isToolPoint(point)) {
    return z.strictObject({ event, result }).meta({ title: point, description: `${returns}${observeText(handler)}` });
  }
  const tools = ToolGlobs.meta({
    description: `Write the handler as \`${handler}: { tools: [...], handler(event, ctx) { … } }\` to have it called only for tools whose name matches a glob (\`*\` any run of characters, \`?\` one); other calls never enter the sandbox. A plain function matches every tool.`,
  });
  return z
    .strictObject({ event, result, tools: tools.optional() })
    .meta({ title: point, description: `${returns}${observeText(handler)}` });
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
