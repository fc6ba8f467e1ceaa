import { SourceMap, type SourceMapPayload } from "node:module";
import { relative, resolve } from "node:path";
import type { BundleErrorCode, BundleProblem } from "./bundle-error.js";
import { toPosix } from "./entry.js";

/**
 * esbuild cannot bundle `import(x)` or `require(x)` with a computed specifier; with dynamic imports lowered
 * (`supported: { "dynamic-import": false }`) both become calls of its `__require` helper, which only
 * throws in an isolate. Each call site is mapped back through the source map to the file:line that made
 * it. Identifiers of the hook's own named `__require` are renamed by esbuild, so the name is the helper's.
 */
const HELPER_DEFINITION = "var __require = ";
const HELPER_CALL = /\b__require\(/g;

export interface ComputedLoad {
  readonly code: Extract<BundleErrorCode, "dynamic_import" | "dynamic_require">;
  readonly problem: BundleProblem;
}

export function findComputedLoads(code: string, sourceMap: string, workDir: string, cwd: string): ComputedLoad[] {
  if (!code.includes(HELPER_DEFINITION)) return [];
  // esbuild wrote this map a moment ago; it is trusted host data, not guest output.
  const payload = JSON.parse(sourceMap) as SourceMapPayload & { sourcesContent?: (string | null)[] };
  const map = new SourceMap(payload);
  const lineStarts = [0];
  for (let i = code.indexOf("\n"); i !== -1; i = code.indexOf("\n", i + 1)) lineStarts.push(i + 1);
  const loads: ComputedLoad[] = [];
  for (const match of code.matchAll(HELPER_CALL)) {
    const line = lastIndexAtMost(lineStarts, match.index);
    const entry = map.findEntry(line, match.index - (lineStarts[line] ?? 0));
    if (!("originalSource" in entry)) continue;
    const sourceIndex = payload.sources.indexOf(entry.originalSource);
    const text = payload.sourcesContent?.[sourceIndex]?.split("\n")[entry.originalLine]?.slice(entry.originalColumn);
    const kind = classify(text);
    // Anything else is the helper referenced without a call at this spot (e.g. `typeof require`): harmless.
    if (kind === undefined) continue;
    const file = entry.originalSource.includes(":")
      ? entry.originalSource
      : toPosix(relative(cwd, resolve(workDir, entry.originalSource)));
    const message =
      kind === "dynamic_import"
        ? "`import()` with a computed specifier is not supported: hooks cannot load code at run time. Use a static import."
        : "`require()` with a computed specifier is not supported: hooks cannot load code at run time. Use a static import.";
    loads.push({
      code: kind,
      problem: { message, file, line: entry.originalLine + 1, column: entry.originalColumn + 1 },
    });
  }
  return loads;
}

function classify(original: string | undefined): ComputedLoad["code"] | undefined {
  if (original === undefined) return undefined;
  if (/^import\s*\(/.test(original)) return "dynamic_import";
  if (/^require\s*\(/.test(original)) return "dynamic_require";
  return undefined;
}

function lastIndexAtMost(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if ((sorted[mid] ?? 0) <= value) low = mid;
    else high = mid - 1;
  }
  return low;
}
