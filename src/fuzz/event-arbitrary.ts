import fc from "fast-check";
import type { z } from "zod";
import { HOOK_POINTS, type HookPoint, toJsonSchema } from "../protocol/index.js";

type JsonSchema = z.core.JSONSchema.JSONSchema;
type Arb = fc.Arbitrary<unknown>;

/** Nesting past this depth generates only leaves (recursive JSON values would otherwise grow without bound). */
const MAX_DEPTH = 3;
/** Generated strings and arrays stay short: the fuzz is about shapes and edge values, not volume. */
const MAX_STRING = 48;
const MAX_ITEMS = 4;

/**
 * Generates valid events for a hook point, derived from the point's zod schema through its JSON Schema
 * (`z.toJSONSchema`). `dictionary` holds strings worth trying (e.g. every string in the hook's fixtures:
 * tool names, argument keys, commands), mixed in wherever a string or key of that length may appear, so
 * the fuzz reaches the branches a hook actually has. Every value is re-checked against the zod schema.
 */
/** One generated event for a point, the same for the same seed: a starting point for a fixture line. */
export function sampleEvent(point: HookPoint, seed = 1): unknown {
  return fc.sample(eventArbitrary(point), { seed, numRuns: 1 })[0];
}

export function eventArbitrary(point: HookPoint, dictionary: readonly string[] = []): Arb {
  const schema = HOOK_POINTS[point].event;
  const json = toJsonSchema(schema, "input");
  const defs = json.$defs ?? {};
  const context: Context = { defs, dictionary: [...new Set(dictionary)] };
  return toArbitrary(json, context, 0).filter((event) => schema.safeParse(event).success);
}

interface Context {
  readonly defs: Record<string, JsonSchema>;
  readonly dictionary: readonly string[];
}

function toArbitrary(schema: JsonSchema | boolean, context: Context, depth: number): Arb {
  if (typeof schema === "boolean") return schema ? leafJson(context) : fc.constant(null);
  if (schema.$ref !== undefined) {
    const name = schema.$ref.replace(/^#\/\$defs\//, "");
    const target = context.defs[name];
    if (!target) throw new Error(`Unresolvable $ref ${schema.$ref} in an event schema`);
    // A reference is no nesting of its own: the arrays and objects it leads to count, which bounds recursion.
    return toArbitrary(target, context, depth);
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum !== undefined) return fc.constantFrom(...schema.enum);
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices !== undefined) {
    const usable = depth >= MAX_DEPTH ? choices.filter(isLeaf) : choices;
    return fc.oneof(...(usable.length > 0 ? usable : choices).map((c) => toArbitrary(c, context, depth)));
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string":
      return stringArbitrary(schema, context);
    case "integer":
      return integerArbitrary(schema);
    case "number":
      return numberArbitrary(schema);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return arrayArbitrary(schema, context, depth);
    case "object":
      return objectArbitrary(schema, context, depth);
    case undefined:
      return leafJson(context);
    default: {
      const never: never = type;
      throw new Error(`Unsupported JSON Schema type ${String(never)}`);
    }
  }
}

function isLeaf(schema: JsonSchema): boolean {
  return schema.$ref === undefined && schema.type !== "array" && schema.type !== "object";
}

function leafJson(context: Context): Arb {
  return fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    dictionaryOr(fc.string({ maxLength: MAX_STRING }), context, 0, MAX_STRING),
  );
}

function stringArbitrary(schema: JsonSchema, context: Context): Arb {
  const min = schema.minLength ?? 0;
  const max = Math.max(min, Math.min(schema.maxLength ?? MAX_STRING, MAX_STRING));
  const fits = (s: string) => s.length >= min && s.length <= (schema.maxLength ?? Number.POSITIVE_INFINITY);
  let base: fc.Arbitrary<string>;
  if (schema.pattern !== undefined) {
    const pattern = new RegExp(schema.pattern);
    base = fc.stringMatching(pattern).filter(fits);
    const words = context.dictionary.filter((w) => fits(w) && pattern.test(w));
    return words.length > 0
      ? fc.oneof({ arbitrary: base, weight: 1 }, { arbitrary: fc.constantFrom(...words), weight: 2 })
      : base;
  }
  base = fc.oneof(
    fc.string({ minLength: min, maxLength: max }),
    fc.string({ minLength: min, maxLength: max, unit: "binary" }),
  );
  return dictionaryOr(base, context, min, schema.maxLength ?? Number.POSITIVE_INFINITY);
}

function dictionaryOr(base: fc.Arbitrary<string>, context: Context, min: number, max: number): Arb {
  const words = context.dictionary.filter((w) => w.length >= min && w.length <= max);
  if (words.length === 0) return base;
  return fc.oneof({ arbitrary: base, weight: 1 }, { arbitrary: fc.constantFrom(...words), weight: 1 });
}

function integerArbitrary(schema: JsonSchema): Arb {
  const lo = Math.max(lowerBound(schema, 1), Number.MIN_SAFE_INTEGER);
  const hi = Math.min(upperBound(schema, 1), Number.MAX_SAFE_INTEGER);
  const small = fc.integer({ min: Math.max(lo, -1000), max: Math.max(Math.max(lo, -1000), Math.min(hi, 1000)) });
  const edges = fc.constantFrom(lo, hi);
  return fc.oneof({ arbitrary: small, weight: 4 }, { arbitrary: edges, weight: 1 }).filter((n) => n >= lo && n <= hi);
}

function numberArbitrary(schema: JsonSchema): Arb {
  const exclusiveMin = typeof schema.exclusiveMinimum === "number" ? schema.exclusiveMinimum : undefined;
  const exclusiveMax = typeof schema.exclusiveMaximum === "number" ? schema.exclusiveMaximum : undefined;
  return fc
    .double({
      min: schema.minimum ?? exclusiveMin ?? -1e9,
      max: schema.maximum ?? exclusiveMax ?? 1e9,
      minExcluded: schema.minimum === undefined && exclusiveMin !== undefined,
      maxExcluded: schema.maximum === undefined && exclusiveMax !== undefined,
      noNaN: true,
      noDefaultInfinity: true,
    })
    .map((n) => (Object.is(n, -0) ? 0 : n));
}

/** Inclusive lower bound; `step` is 1 for integers (exclusive bounds move by one). */
function lowerBound(schema: JsonSchema, step: number): number {
  if (typeof schema.exclusiveMinimum === "number") return schema.exclusiveMinimum + step;
  return schema.minimum ?? Number.NEGATIVE_INFINITY;
}

function upperBound(schema: JsonSchema, step: number): number {
  if (typeof schema.exclusiveMaximum === "number") return schema.exclusiveMaximum - step;
  return schema.maximum ?? Number.POSITIVE_INFINITY;
}

function arrayArbitrary(schema: JsonSchema, context: Context, depth: number): Arb {
  const minLength = schema.minItems ?? 0;
  if (depth >= MAX_DEPTH && minLength === 0) return fc.constant([]);
  const items = Array.isArray(schema.items) ? schema.items[0] : schema.items;
  const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? MAX_ITEMS, MAX_ITEMS));
  return fc.array(toArbitrary(items ?? true, context, depth + 1), { minLength, maxLength });
}

function objectArbitrary(schema: JsonSchema, context: Context, depth: number): Arb {
  if (schema.properties !== undefined) {
    const model: Record<string, Arb> = {};
    for (const [key, value] of Object.entries(schema.properties)) model[key] = toArbitrary(value, context, depth + 1);
    return fc.record(model, { requiredKeys: schema.required ?? [] });
  }
  // No `additionalProperties` means any values (JSON Schema), e.g. a tool call's `args`.
  const values = schema.additionalProperties ?? true;
  if (values === false || depth >= MAX_DEPTH) return fc.constant({});
  const key = dictionaryOr(fc.string({ maxLength: 16 }), context, 0, 64);
  return fc.dictionary(key as fc.Arbitrary<string>, toArbitrary(values, context, depth + 1), { maxKeys: MAX_ITEMS });
}
