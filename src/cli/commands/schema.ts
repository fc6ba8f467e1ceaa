import { z } from "zod";
import { suggestHandler } from "../../bundler/index.js";
import {
  HOOK_POINT_NAMES,
  HOOK_POINTS,
  type HookPoint,
  handlerOf,
  hookPointOfHandler,
  isHookPoint,
  toJsonSchema,
} from "../../protocol/index.js";
import { type Command, EXIT, UsageError, writeJson } from "../command.js";

const HELP = `Usage: isohook schema [hook-point] [--json]

Prints JSON Schema (draft 2020-12) for hook authors, generated from the protocol's zod schemas: for each
hook point, the event its handler receives (properties.event) and the results it may return
(properties.result). Returning nothing is the no-op at every point; run.end accepts no result.

Arguments:
  hook-point   One of ${HOOK_POINT_NAMES.join(", ")}.
               Without it, every hook point (properties keyed by point).

Options:
  --json       One line of JSON instead of indented JSON
  -h, --help   Show this help

Exit codes: 0 printed, 2 usage.
`;

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
export function hookSchema(point?: HookPoint): Record<string, unknown> {
  if (point !== undefined) return toJsonSchema(pointSchema(point));
  const all = z
    .strictObject(Object.fromEntries(HOOK_POINT_NAMES.map((p) => [p, pointSchema(p)])))
    .meta({ title: "isohook hook points", description: "Every hook point's event and results, keyed by point." });
  return toJsonSchema(all);
}

function unknownPoint(name: string): UsageError {
  const handler = hookPointOfHandler(name) ?? hookPointOfHandler(suggestHandler(name) ?? "");
  const hint = handler === undefined ? "" : ` (did you mean \`${handler}\`?)`;
  return new UsageError(`Unknown hook point \`${name}\`${hint}. Valid hook points: ${HOOK_POINT_NAMES.join(", ")}`);
}

export const schemaCommand: Command = {
  name: "schema",
  summary: "Print JSON Schema of hook events and results",
  help: HELP,
  options: {},
  allowPositionals: true,
  async run(args, io) {
    const [name, ...rest] = args.positionals;
    if (rest.length > 0) throw new UsageError(`Expected at most one hook point, got ${args.positionals.length}`);
    if (name !== undefined && !isHookPoint(name)) throw unknownPoint(name);
    const schema = hookSchema(name);
    if (args.json) writeJson(io, schema);
    else io.stdout(`${JSON.stringify(schema, null, 2)}\n`);
    return EXIT.ok;
  },
};
