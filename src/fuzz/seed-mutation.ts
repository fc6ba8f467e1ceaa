import fc from "fast-check";
import { HOOK_POINTS, type HookPoint, type JsonValue } from "../protocol/index.js";
import type { SeedEvent } from "./fuzz-target.js";

/** At most this many edits per mutated event: few enough that the seed's branch is usually still reached. */
const MAX_EDITS = 3;

type Edit =
  | { readonly kind: "replace"; readonly at: number; readonly value: JsonValue }
  | { readonly kind: "append"; readonly at: number; readonly text: string }
  | { readonly kind: "truncate"; readonly at: number; readonly keep: number }
  | { readonly kind: "drop"; readonly at: number }
  | { readonly kind: "duplicate"; readonly at: number };

/**
 * Events near the seeds (fixture events): a seed as is, or with up to three edits anywhere in it — a
 * value replaced (by a dictionary word, a generated string, another JSON value), text appended to a string,
 * a string cut, an object key or array item dropped, an array item duplicated. Edits that make the event
 * invalid for its point are filtered out, so the hook only ever sees events the host could send. Shrinks
 * towards the unmodified seed.
 */
export function seedMutationArbitrary(
  point: HookPoint,
  seeds: readonly SeedEvent[],
  dictionary: readonly string[],
): fc.Arbitrary<unknown> | undefined {
  const events = seeds.filter((s) => s.point === point).map((s) => s.event);
  if (events.length === 0) return undefined;
  const schema = HOOK_POINTS[point].event;
  const text = dictionary.length > 0 ? fc.oneof(fc.constantFrom(...dictionary), fc.string()) : fc.string();
  const value: fc.Arbitrary<JsonValue> = fc.oneof(
    text,
    fc.string({ unit: "binary", maxLength: 48 }),
    fc.constantFrom<JsonValue>("", " ", "\u0000", "\u202e", "💣", null, true, false, 0, -1, 1e21, []),
    fc.integer(),
    fc.dictionary(fc.string({ maxLength: 8 }), text, { maxKeys: 2 }),
  );
  const at = fc.nat();
  const edit: fc.Arbitrary<Edit> = fc.oneof(
    fc.record({ kind: fc.constant("replace" as const), at, value }),
    fc.record({ kind: fc.constant("append" as const), at, text }),
    fc.record({ kind: fc.constant("truncate" as const), at, keep: fc.nat({ max: 64 }) }),
    fc.record({ kind: fc.constant("drop" as const), at }),
    fc.record({ kind: fc.constant("duplicate" as const), at }),
  );
  const edited = fc
    .tuple(fc.constantFrom(...events), fc.array(edit, { minLength: 1, maxLength: MAX_EDITS }))
    .map(([event, edits]) => edits.reduce(applyEdit, event))
    .filter((event) => schema.safeParse(event).success);
  return fc.oneof({ arbitrary: fc.constantFrom(...events), weight: 1 }, { arbitrary: edited, weight: 4 });
}

/** A place in an event: the container holding it and its key there (undefined key: the root). */
interface Slot {
  readonly parent: JsonValue[] | { [key: string]: JsonValue } | undefined;
  readonly key: string | number;
  readonly value: JsonValue;
}

function applyEdit(event: JsonValue, edit: Edit): JsonValue {
  const copy = structuredClone(event);
  const slots: Slot[] = [];
  listSlots(copy, undefined, "", slots);
  // Values are replaced, extended or cut at the leaves; containers only lose or repeat whole items.
  const leaf = edit.kind === "replace" || edit.kind === "append" || edit.kind === "truncate";
  const usable = slots.filter((s) => (leaf ? typeof s.value !== "object" || s.value === null : s.parent !== undefined));
  const slot = usable[edit.at % Math.max(1, usable.length)];
  if (slot === undefined) return copy;
  const set = (value: JsonValue | undefined) => {
    if (slot.parent === undefined) return value ?? null;
    if (Array.isArray(slot.parent)) {
      const index = slot.key as number;
      if (value === undefined) slot.parent.splice(index, 1);
      else slot.parent[index] = value;
    } else if (value === undefined) delete slot.parent[slot.key];
    else slot.parent[slot.key] = value;
    return copy;
  };
  switch (edit.kind) {
    case "replace":
      return set(edit.value);
    case "append":
      return typeof slot.value === "string" ? set(slot.value + edit.text) : copy;
    case "truncate":
      return typeof slot.value === "string" ? set(slot.value.slice(0, edit.keep)) : copy;
    case "drop":
      return set(undefined);
    case "duplicate":
      if (Array.isArray(slot.parent)) slot.parent.splice(slot.key as number, 0, structuredClone(slot.value));
      return copy;
    default: {
      const never: never = edit;
      throw new Error(`Unknown edit ${JSON.stringify(never)}`);
    }
  }
}

function listSlots(value: JsonValue, parent: Slot["parent"], key: string | number, into: Slot[]): void {
  into.push({ parent, key, value });
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) listSlots(item, value, i, into);
  } else if (typeof value === "object" && value !== null)
    for (const [k, item] of Object.entries(value)) listSlots(item, value, k, into);
}
