import { z } from "zod";
import type { JsonObject, ToolResult, ToolSpec } from "../protocol/index.js";

/** What a tool's `execute` receives beside its validated arguments. */
export interface ToolContext {
  readonly callId: string;
  readonly signal: AbortSignal;
}

/**
 * A tool the model may call. `parameters` validates the arguments — the model's, and every hook rewrite of
 * them — before `execute` runs; `spec` is what the model and the hooks see (never the live object).
 * `execute` may throw: the loop turns that into an error tool result and the run goes on.
 */
export interface Tool {
  readonly spec: ToolSpec;
  readonly parameters: z.ZodType;
  /** Receives only what `parameters` produced from the call's (possibly rewritten) arguments. */
  execute(args: unknown, context: ToolContext): Promise<ToolResult>;
}

/**
 * Builds a `Tool` from a zod object schema; its JSON Schema for the model is generated from the same schema.
 *
 * ```ts
 * const shell = defineTool({
 *   name: "shell",
 *   description: "Runs a shell command",
 *   parameters: z.object({ command: z.string(), cwd: z.string().optional() }),
 *   execute: async ({ command }) => ({ content: `ran ${command}`, isError: false }),
 * });
 * ```
 */
export function defineTool<S extends z.ZodType<Record<string, unknown>>>(definition: {
  name: string;
  description: string;
  parameters: S;
  execute(args: z.output<S>, context: ToolContext): Promise<ToolResult | string>;
}): Tool {
  const { name, description, parameters, execute } = definition;
  // z.toJSONSchema emits plain JSON; its type is only wider than JsonObject.
  const { $schema: _, ...jsonSchema } = z.toJSONSchema(parameters, {
    io: "input",
    unrepresentable: "any",
  }) as JsonObject;
  return {
    spec: { name, description, parameters: jsonSchema },
    parameters,
    async execute(args, context) {
      // The loop hands `execute` only the output of `parameters.safeParse`.
      const result = await execute(args as z.output<S>, context);
      return typeof result === "string" ? { content: result, isError: false } : result;
    },
  };
}
