import { createHash } from "node:crypto";
import type { JsonValue } from "../protocol/index.js";
import type { MaskRule } from "../store/index.js";

/** Which part of a call a mask path starts at. */
export type MaskRoot = "event" | "ctx" | "result";

/** A tenant's rules split by root, each path as its segments after the root. */
export type MaskPlan = Readonly<Record<MaskRoot, readonly CompiledRule[]>>;

interface CompiledRule {
  readonly segments: readonly string[];
  readonly action: MaskRule["action"];
}

export function compileMask(rules: readonly MaskRule[]): MaskPlan {
  const plan: Record<MaskRoot, CompiledRule[]> = { event: [], ctx: [], result: [] };
  for (const rule of rules) {
    const [root, ...segments] = rule.path.split(".");
    if (root === "event" || root === "ctx" || root === "result") plan[root].push({ segments, action: rule.action });
  }
  return plan;
}

/**
 * Applies rules to a parsed value in place: `drop` deletes the key (an array item becomes null, so the
 * other indexes keep their meaning), `hash` replaces the value with `sha256:<16 hex>` of its JSON salted
 * with the tenant id (equal values stay comparable within a tenant; a guessable value is still guessable,
 * so drop secrets). Returns whether anything matched.
 */
export function applyMask(value: JsonValue, rules: readonly CompiledRule[], salt: string): boolean {
  let hit = false;
  for (const rule of rules) if (walk(value, rule.segments, 0, rule.action, salt)) hit = true;
  return hit;
}

function walk(node: JsonValue, segments: readonly string[], at: number, action: MaskRule["action"], salt: string) {
  if (typeof node !== "object" || node === null) return false;
  const segment = segments[at];
  if (segment === undefined) return false;
  const last = at === segments.length - 1;
  const keys = segment === "*" ? Object.keys(node) : Object.hasOwn(node, segment) ? [segment] : [];
  let hit = false;
  for (const key of keys) {
    const container = node as Record<string, JsonValue>;
    const child = container[key];
    if (child === undefined) continue;
    if (!last) {
      if (walk(child, segments, at + 1, action, salt)) hit = true;
      continue;
    }
    hit = true;
    if (action === "hash") container[key] = hashOf(child, salt);
    else if (Array.isArray(node)) container[key] = null;
    else delete container[key];
  }
  return hit;
}

function hashOf(value: JsonValue, salt: string): string {
  const digest = createHash("sha256").update(salt).update("\u0000").update(JSON.stringify(value)).digest("hex");
  return `sha256:${digest.slice(0, 16)}`;
}
