import { HOOK_POINT_NAMES, hookSchema } from "../../protocol/index.js";
import { printable } from "../../terminal/index.js";
import { type Command, EXIT, UsageError, writeJson } from "../command.js";
import { hookPointOf } from "../hook-point-option.js";

const HELP = `Usage: isohook schema [hook-point] [--json]

Prints JSON Schema (draft 2020-12) for hook authors, generated from the protocol's zod schemas: for each
hook point, the event its handler receives (properties.event) and the results it may return
(properties.result). Returning nothing is the no-op at every point; run.end accepts no result. At
tool.call, tool.result and tool.invalid, properties.tools is the list of tool-name globs of a handler
written { tools, handler }. Observe-only handlers (observe: { … }) receive the same events; their
results are ignored.

Arguments:
  hook-point   One of ${HOOK_POINT_NAMES.join(", ")}.
               Without it, every hook point (properties keyed by point).

Options:
  --json       One line of JSON instead of indented JSON
  -h, --help   Show this help

Exit codes: 0 printed, 2 usage.
`;

export const schemaCommand: Command = {
  name: "schema",
  summary: "Print JSON Schema of hook events and results",
  help: HELP,
  options: {},
  allowPositionals: true,
  async run(args, io) {
    const [name, ...rest] = args.positionals;
    if (rest.length > 0) throw new UsageError(`Expected at most one hook point, got ${args.positionals.length}`);
    const schema = hookSchema(name === undefined ? undefined : hookPointOf(name));
    if (args.json) writeJson(io, schema);
    // The published schema, indented for reading: isohook's own text, its line breaks kept.
    else io.stdout(printable(`${JSON.stringify(schema, null, 2)}\n`, { keepNewlines: true }));
    return EXIT.ok;
  },
};
