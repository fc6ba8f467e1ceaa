import { z } from "zod";
import { JsonObject, ToolName, ToolResult } from "../protocol/index.js";
import type { Tool } from "./tool.js";

/**
 * A tool declared in data (a scenario file): its parameters as JSON Schema, and a canned result — a string
 * whose `{name}` placeholders are filled from the top-level arguments, or a full tool result. Without a
 * result the tool echoes its arguments as JSON. Reproducible by construction: nothing runs.
 */
export const ToolDeclaration = z.strictObject({
  name: ToolName,
  description: z.string().max(2_000).default(""),
  parameters: JsonObject.default({ type: "object" }),
  result: z.union([z.string(), ToolResult]).optional(),
});
export type ToolDeclaration = z.infer<typeof ToolDeclaration>;
export type ToolDeclarationInput = z.input<typeof ToolDeclaration>;

/** A declared tool's JSON Schema that zod cannot turn into a validator. */
export class ToolSchemaError extends Error {
  readonly code = "tool_schema";
  constructor(tool: string, detail: string) {
    super(
      `The parameters of tool \`${tool}\` are no JSON Schema isohook can validate with: ${detail}. Use a self-contained object schema (local $refs only)`,
    );
    this.name = "ToolSchemaError";
  }
}

/** Turns a declaration into a `Tool`; throws `ToolSchemaError` for an unusable JSON Schema. */
export function declaredTool(input: ToolDeclarationInput): Tool {
  const declaration = ToolDeclaration.parse(input);
  let parameters: z.ZodType;
  try {
    parameters = z.fromJSONSchema(declaration.parameters);
  } catch (error) {
    throw new ToolSchemaError(declaration.name, error instanceof Error ? error.message : String(error));
  }
  const { name, description, result } = declaration;
  return {
    spec: { name, description, parameters: declaration.parameters },
    parameters,
    async execute(args) {
      const values = isRecord(args) ? args : {};
      if (result === undefined) return { content: JSON.stringify(args), isError: false };
      if (typeof result === "string") return { content: fill(result, values), isError: false };
      return { ...result, content: fill(result.content, values) };
    },
  };
}

function fill(template: string, args: Record<string, unknown>): string {
  return template.replace(/\{([A-Za-z0-9_]+)\}/g, (whole, key: string) => {
    if (!Object.hasOwn(args, key)) return whole;
    const value = args[key];
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
