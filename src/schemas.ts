/**
 * `isohook/schemas`: the shapes isohook accepts and produces, as JSON Schema documents (draft 2020-12),
 * so that zod stays an implementation detail and not part of isohook's API. `hookSchema()` covers every
 * hook point's event and results (what `isohook schema` prints); `jsonSchema(name)` the other shapes.
 *
 * ```ts
 * import { hookSchema, jsonSchema } from "isohook/schemas";
 * const toolCall = hookSchema("tool.call"); // { properties: { event, result }, … }
 * const scenario = jsonSchema("Scenario", "input");
 * ```
 */
import { ApprovalDecision, Scenario, ScriptedTurn, ToolDeclaration } from "./agent/index.js";
import {
  BundleManifest,
  Failure,
  HookContext,
  type JsonSchema,
  Limits,
  Message,
  ToolCall,
  ToolResult,
  ToolSpec,
  toJsonSchema,
  Usage,
} from "./protocol/index.js";
import { CheckpointBody } from "./runtime/index.js";

export { hookSchema, type JsonSchema } from "./protocol/index.js";

const SCHEMAS = {
  ApprovalDecision,
  BundleManifest,
  CheckpointBody,
  Failure,
  HookContext,
  Limits,
  Message,
  Scenario,
  ScriptedTurn,
  ToolCall,
  ToolDeclaration,
  ToolResult,
  ToolSpec,
  Usage,
};

export type SchemaName = keyof typeof SCHEMAS;

/** The names `jsonSchema` knows. */
export const SCHEMA_NAMES = Object.keys(SCHEMAS) as SchemaName[];

/**
 * One shape as JSON Schema: `output` (default) is what isohook produces or accepts after defaults, `input`
 * what a caller may write (fields with defaults optional). Throws a `RangeError` for an unknown name.
 */
export function jsonSchema(name: SchemaName, io: "input" | "output" = "output"): JsonSchema {
  if (!Object.hasOwn(SCHEMAS, name)) {
    throw new RangeError(`Unknown schema \`${String(name)}\`. Known schemas: ${SCHEMA_NAMES.join(", ")}`);
  }
  return toJsonSchema(SCHEMAS[name], io);
}
