import { z } from "zod";

/** Any JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Deeper than this is refused: no legitimate hook result nests 512 levels, and it bounds the walk. */
export const MAX_JSON_DEPTH = 512;

/**
 * Whether `value` is a JSON value: finite numbers, plain objects and arrays of JSON values, no cycles
 * deeper than MAX_JSON_DEPTH. Iterative, allocation-light: this runs on every guest reply (the hot path),
 * where zod's recursive union cost ~10× the `JSON.parse` of the same text and overflowed the stack on
 * deep input.
 */
export function isJsonValue(value: unknown): value is JsonValue {
  const pending: unknown[] = [value];
  const depths: number[] = [0];
  while (pending.length > 0) {
    const item = pending.pop();
    const depth = depths.pop() ?? 0;
    if (item === null) continue;
    switch (typeof item) {
      case "string":
      case "boolean":
        continue;
      case "number":
        if (!Number.isFinite(item)) return false;
        continue;
      case "object": {
        if (depth >= MAX_JSON_DEPTH) return false;
        if (Array.isArray(item)) {
          for (const element of item) {
            pending.push(element);
            depths.push(depth + 1);
          }
          continue;
        }
        const proto = Object.getPrototypeOf(item);
        if (proto !== Object.prototype && proto !== null) return false;
        for (const key in item) {
          pending.push((item as Record<string, unknown>)[key]);
          depths.push(depth + 1);
        }
        continue;
      }
      default:
        return false;
    }
  }
  return true;
}

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) && isJsonValue(value);
}

export const JsonValue: z.ZodType<JsonValue, JsonValue> = z.custom<JsonValue>(isJsonValue, {
  error: (issue) =>
    `Expected a JSON value (finite numbers, plain objects and arrays, at most ${MAX_JSON_DEPTH} levels deep), received ${kindOf(issue.input)}`,
});

export const JsonObject: z.ZodType<JsonObject, JsonObject> = z.custom<JsonObject>(isJsonObject, {
  error: (issue) => `Expected a JSON object (at most ${MAX_JSON_DEPTH} levels deep), received ${kindOf(issue.input)}`,
});

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object that is not JSON" : typeof value;
}

/** A JSON Schema document (draft 2020-12), as plain data. */
export type JsonSchema = { readonly [key: string]: unknown };

/**
 * JSON Schema for any schema built from these: `JsonValue` is `{}` (JSON Schema only ever sees JSON) and
 * `JsonObject` is `{"type": "object"}`. Every `z.toJSONSchema` of protocol schemas goes through here.
 */
export function toJsonSchema(schema: z.ZodType, io: "input" | "output" = "output"): z.core.JSONSchema.BaseSchema {
  return z.toJSONSchema(schema, {
    io,
    unrepresentable: "any",
    override: (ctx) => {
      const source: unknown = ctx.zodSchema;
      if (source === JsonValue) Object.assign(ctx.jsonSchema, { description: "any JSON value" });
      else if (source === JsonObject) Object.assign(ctx.jsonSchema, { type: "object", description: "a JSON object" });
    },
  });
}
