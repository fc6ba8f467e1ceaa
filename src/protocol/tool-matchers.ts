import { z } from "zod";
import type { HookPoint } from "./hook-points.js";

/** The points whose handlers may name the tools they care about: the event carries `call.name`. */
export const TOOL_POINTS = ["tool.invalid", "tool.call", "tool.result"] as const satisfies readonly HookPoint[];
export type ToolPoint = (typeof TOOL_POINTS)[number];

export function isToolPoint(point: HookPoint): point is ToolPoint {
  return point === "tool.call" || point === "tool.result" || point === "tool.invalid";
}

/** Most globs one handler may list. */
export const MAX_TOOL_GLOBS = 64;
/** Longest glob, in characters. */
export const MAX_TOOL_GLOB_CHARS = 128;

/**
 * A tool-name glob: the characters of a tool name (letters, digits, `_`, `.`, `-`) plus `*` (any run of
 * characters, none included) and `?` (exactly one character). Nothing else: no classes, no braces, no
 * escapes, no regular expressions, so a tenant's pattern cannot backtrack or match outside the name.
 */
export const ToolGlob = z
  .string()
  .min(1)
  .max(MAX_TOOL_GLOB_CHARS)
  .regex(/^[A-Za-z0-9_.*?-]+$/, "Expected a tool-name glob of letters, digits, '_', '.', '-' and the wildcards * ?");

/** The globs of one handler: it is called for a tool whose name matches any of them. */
export const ToolGlobs = z.array(ToolGlob).min(1).max(MAX_TOOL_GLOBS);

/**
 * Tool matchers by point, as recorded in a bundle's manifest: a handler written `{ tools, handler }` has its
 * globs here; a point absent (or a plain function handler) matches every tool.
 */
export const ToolMatchers = z.strictObject({
  "tool.invalid": ToolGlobs.optional(),
  "tool.call": ToolGlobs.optional(),
  "tool.result": ToolGlobs.optional(),
});
export type ToolMatchers = z.infer<typeof ToolMatchers>;

/** A compiled matcher: `true` when a handler with these globs is called for the tool `name`. */
export type ToolNameTest = (name: string) => boolean;

/** Memoised answers kept per compiled matcher (a run sees few distinct tool names). */
const MEMO_LIMIT = 256;

/**
 * Compiles globs once (per bundle): exact names go in a set, the rest are matched by `globMatch`, which is
 * linear in practice and O(name × glob) at worst (no backtracking regex); answers are memoised per name.
 */
export function compileToolGlobs(globs: readonly string[]): ToolNameTest {
  const exact = new Set<string>();
  const wild: string[] = [];
  for (const glob of globs) {
    if (glob === "*") return () => true;
    if (glob.includes("*") || glob.includes("?")) wild.push(glob);
    else exact.add(glob);
  }
  if (wild.length === 0) return (name) => exact.has(name);
  const memo = new Map<string, boolean>();
  return (name) => {
    if (exact.has(name)) return true;
    const known = memo.get(name);
    if (known !== undefined) return known;
    const matched = wild.some((glob) => globMatch(glob, name));
    if (memo.size < MEMO_LIMIT) memo.set(name, matched);
    return matched;
  };
}

/**
 * Whether `name` matches `glob` (`*` any run, `?` one character, the rest literal), by the two-pointer
 * wildcard walk: on a mismatch it resumes after the last `*`, so it never revisits more than that star.
 */
export function globMatch(glob: string, name: string): boolean {
  let g = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    const c = glob.charCodeAt(g);
    if (g < glob.length && (c === QUESTION || c === name.charCodeAt(n))) {
      g++;
      n++;
    } else if (g < glob.length && c === STAR) {
      star = g++;
      resume = n;
    } else if (star !== -1) {
      g = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (g < glob.length && glob.charCodeAt(g) === STAR) g++;
  return g === glob.length;
}

const STAR = 42;
const QUESTION = 63;

/** The tool name an event of a tool point is about. */
export function toolNameOf(event: { readonly call: { readonly name: string } }): string {
  return event.call.name;
}
