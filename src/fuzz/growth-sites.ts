import type { JsonValue } from "../protocol/index.js";
import type { GrowthInput, SeedEvent } from "./fuzz-target.js";

/** One way to grow one value of one seed event. */
export interface GrowthSeries {
  readonly seed: SeedEvent;
  /** Keys and indices from the event's root to the value. */
  readonly path: readonly (string | number)[];
  readonly kind: "string" | "array";
  readonly shape: "repeat" | "pump";
  /** The repeated unit: the whole string, one character, or (arrays) the item list. */
  readonly unit: string;
  /** The value's own length: growth starts above it. */
  readonly baseSize: number;
  /**
   * Added to every size: a repeated string is cut half-way through its unit, so it never ends as the seed
   * does (`rm -rf /rm -rf /rm -` rather than `…rm -rf /`): an ending that lets a pattern match early hides
   * the backtracking of the inputs that do not.
   */
  readonly offset: number;
  /** Builds the value at `size` (characters or items). */
  readonly grow: (size: number) => JsonValue;
}

/** Strings longer than this are not grown by repetition (already a long value; pumping still applies). */
const MAX_REPEAT_UNIT = 256;

/**
 * Every way the timeout hunt grows the seed events: each string is repeated whole, and pumped (a character
 * repeated at its middle: the character found there, skipping whitespace, and a space), each array has its
 * items repeated. Values identical at the same path of the same point are grown once.
 */
export function growthSeries(seeds: readonly SeedEvent[]): GrowthSeries[] {
  const series: GrowthSeries[] = [];
  const seen = new Set<string>();
  for (const seed of seeds) {
    walk(seed.event, [], (path, value) => {
      const key = `${seed.point}\u0000${path.join(".")}\u0000${JSON.stringify(value).slice(0, 512)}`;
      if (seen.has(key)) return;
      seen.add(key);
      if (typeof value === "string") series.push(...stringSeries(seed, path, value));
      else if (Array.isArray(value) && value.length > 0) {
        const items = value;
        series.push({
          seed,
          path,
          kind: "array",
          shape: "repeat",
          unit: `${items.length} item${items.length === 1 ? "" : "s"}`,
          baseSize: items.length,
          offset: 0,
          grow: (size) => Array.from({ length: size }, (_, i) => items[i % items.length] ?? null),
        });
      }
    });
  }
  return series;
}

function stringSeries(seed: SeedEvent, path: (string | number)[], value: string): GrowthSeries[] {
  const out: GrowthSeries[] = [];
  const base = { seed, path, kind: "string" as const, baseSize: value.length, offset: 0 };
  if (value.length > 0 && value.length <= MAX_REPEAT_UNIT) {
    out.push({
      ...base,
      offset: Math.floor(value.length / 2),
      shape: "repeat",
      unit: value,
      grow: (size) => value.repeat(Math.ceil(size / value.length)).slice(0, size),
    });
  }
  const middle = Math.floor(value.length / 2);
  const around = [...value.slice(middle), ...value.slice(0, middle).split("").reverse()];
  const chars = new Set([around.find((c) => c.trim() !== "") ?? "x", " "]);
  for (const unit of chars) {
    out.push({
      ...base,
      shape: "pump",
      unit,
      grow: (size) => value.slice(0, middle) + unit.repeat(Math.max(0, size - value.length)) + value.slice(middle),
    });
  }
  return out;
}

function walk(
  value: JsonValue,
  path: (string | number)[],
  visit: (path: (string | number)[], value: JsonValue) => void,
) {
  visit(path, value);
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) walk(item, [...path, i], visit);
  } else if (typeof value === "object" && value !== null)
    for (const [key, item] of Object.entries(value)) walk(item, [...path, key], visit);
}

/** The seed event with the series' value replaced by its grown form. */
export function grownEvent(series: GrowthSeries, size: number): JsonValue {
  const value = series.grow(size);
  if (series.path.length === 0) return value;
  const copy = structuredClone(series.seed.event);
  let node: JsonValue = copy;
  for (const key of series.path.slice(0, -1)) node = (node as Record<string | number, JsonValue>)[key] ?? null;
  (node as Record<string | number, JsonValue>)[series.path[series.path.length - 1] ?? ""] = value;
  return copy;
}

/** How a series' input at `size` is reported: which value, grown how, shown short. */
export function growthInput(series: GrowthSeries, size: number): GrowthInput {
  return {
    origin: series.seed.origin,
    path: series.path
      .map((k) => (typeof k === "number" ? `[${k}]` : k))
      .join(".")
      .replace(/\.\[/g, "["),
    shape: series.shape,
    unit: series.unit,
    size,
    kind: series.kind,
    preview: preview(series, size),
  };
}

function preview(series: GrowthSeries, size: number): string {
  const value = series.grow(Math.min(size, series.baseSize));
  if (series.kind === "array") return `${series.unit} repeated to ${size} items`;
  const base = typeof value === "string" ? value : "";
  if (series.shape === "repeat") {
    const times = Math.floor(size / series.unit.length);
    const rest = series.unit.slice(0, size - times * series.unit.length);
    return `${JSON.stringify(clip(series.unit))}×${times}${rest === "" ? "" : ` + ${JSON.stringify(clip(rest))}`}`;
  }
  const middle = Math.floor(base.length / 2);
  const parts = [
    base.slice(0, middle) && JSON.stringify(clip(base.slice(0, middle))),
    `${JSON.stringify(series.unit)}×${size - base.length}`,
    base.slice(middle) && JSON.stringify(clip(base.slice(middle))),
  ];
  return parts.filter((p) => p !== "").join(" + ");
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
