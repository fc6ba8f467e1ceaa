import type { Failure, StackFrame } from "../protocol/index.js";

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT = new Map([...BASE64].map((c, i) => [c, i]));

interface Segment {
  readonly column: number;
  readonly source: number;
  readonly line: number;
  readonly sourceColumn: number;
}

/**
 * One bundle's source map, read (JSON-parsed) at the first failure that needs it and decoded only as far as
 * the deepest frame asked so far: a hook that throws on every call costs the host one parse, not one per
 * call. An unreadable map maps nothing.
 */
export class SourceMapIndex {
  readonly #text: string;
  #map: { readonly sources: string[]; readonly mappings: string } | null | undefined;
  #lines: Segment[][] = [];

  constructor(text: string) {
    this.#text = text;
  }

  /** The segments of generated line `line` (1-based), or undefined when the map cannot be read. */
  segmentsOf(line: number): { readonly segments: readonly Segment[]; readonly sources: string[] } | undefined {
    if (this.#map === undefined) this.#map = readMap(this.#text) ?? null;
    if (this.#map === null) return undefined;
    if (line > this.#lines.length) this.#lines = decodeMappings(this.#map.mappings, line);
    return { segments: this.#lines[line - 1] ?? [], sources: this.#map.sources };
  }
}

/** Bounded by bundle: the dispatcher keeps the indexes of the bundles it has seen fail lately. */
export class SourceMaps {
  readonly #byHash = new Map<string, SourceMapIndex>();
  readonly #max: number;

  constructor(max = 64) {
    this.#max = max;
  }

  of(hash: string, text: string): SourceMapIndex {
    let index = this.#byHash.get(hash);
    if (index !== undefined) {
      this.#byHash.delete(hash); // re-insert: Map order is the LRU order
    } else {
      index = new SourceMapIndex(text);
      const oldest = this.#byHash.keys().next();
      if (this.#byHash.size >= this.#max && oldest.done !== true) this.#byHash.delete(oldest.value);
    }
    this.#byHash.set(hash, index);
    return index;
  }
}

/**
 * Maps stack frames in a bundle (`file: "bundle"`, 1-based line and column of the bundle script) through the
 * bundle's source map to the author's files (`index.ts:12:7`, paths relative to the hook's folder as the
 * bundler wrote them). Frames with no mapping (the bundler's own wrapper) are dropped. Runs only for
 * failures, never on the hot path.
 */
export function mapStack(frames: readonly StackFrame[], sourceMap: SourceMapIndex): StackFrame[] {
  const mapped: StackFrame[] = [];
  for (const frame of frames) {
    if (frame.file !== "bundle") continue;
    const found = sourceMap.segmentsOf(frame.line);
    if (found === undefined) return [];
    let best: Segment | undefined;
    for (const segment of found.segments) if (segment.column <= frame.column - 1) best = segment;
    const file = best === undefined ? undefined : found.sources[best.source];
    if (best === undefined || file === undefined) continue;
    const out: StackFrame = { file, line: best.line + 1, column: best.sourceColumn + 1 };
    if (frame.name !== undefined) out.name = frame.name;
    mapped.push(out);
  }
  return mapped;
}

/**
 * A thrown failure with its stack mapped to the author's files, or without a stack when no frame maps (the
 * raw bundle positions mean nothing to an author). Only failures pay for it.
 */
export function withSourceStack(failure: Failure, sourceMap: SourceMapIndex | undefined): Failure {
  if (failure.stack === undefined) return failure;
  const { stack, ...rest } = failure;
  const mapped = sourceMap === undefined ? [] : mapStack(stack, sourceMap);
  return mapped.length > 0 ? { ...rest, stack: mapped } : rest;
}

function readMap(text: string): { sources: string[]; mappings: string } | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null) return undefined;
    const sources: unknown = Reflect.get(parsed, "sources");
    const mappings: unknown = Reflect.get(parsed, "mappings");
    if (!Array.isArray(sources) || typeof mappings !== "string") return undefined;
    return { sources: sources.map(String), mappings };
  } catch {
    return undefined;
  }
}

/** The segments of the first `lineCount` generated lines (source map v3, base64 VLQ). */
function decodeMappings(mappings: string, lineCount: number): Segment[][] {
  const lines: Segment[][] = [];
  let source = 0;
  let line = 0;
  let sourceColumn = 0;
  for (const text of mappings.split(";", lineCount)) {
    const segments: Segment[] = [];
    let column = 0;
    for (const part of text.split(",")) {
      if (part === "") continue;
      const values = decodeVlq(part);
      column += values[0] ?? 0;
      if (values.length >= 4) {
        source += values[1] ?? 0;
        line += values[2] ?? 0;
        sourceColumn += values[3] ?? 0;
        segments.push({ column, source, line, sourceColumn });
      }
    }
    lines.push(segments);
  }
  return lines;
}

function decodeVlq(text: string): number[] {
  const values: number[] = [];
  let value = 0;
  let shift = 0;
  for (const char of text) {
    const digit = DIGIT.get(char);
    if (digit === undefined) return values;
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    values.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return values;
}
