import { z } from "zod";

/** Any JSON value. Guest output is JSON by construction (it crossed as a string), this keeps types honest. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export const JsonValue: z.ZodType<JsonValue, JsonValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(JsonValue), z.record(z.string(), JsonValue)]),
);

export const JsonObject: z.ZodType<JsonObject, JsonObject> = z.record(z.string(), JsonValue);
