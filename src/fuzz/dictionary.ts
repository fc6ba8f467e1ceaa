/** Strings worth trying, at most this many: every string and key of the seed events, then the bundle's literals. */
const MAX_WORDS = 500;
const MAX_WORD_LENGTH = 200;
/** Literals in bundle code: short quoted strings without escapes of their own kind. */
const LITERAL = /"((?:[^"\\\n]|\\.){1,64})"|'((?:[^'\\\n]|\\.){1,64})'|`([^`\\$\n]{1,64})`/g;
/** Property names the code reads (`args.command`): likely keys of the events it expects. */
const PROPERTY = /\.([A-Za-z_$][\w$]{0,63})\b/g;

/**
 * The fuzz dictionary: every string and object key of the given values (fixture events), then the string
 * literals of the bundle (`includes("spin")` gives "spin") and the property names it reads (`args.command`
 * gives "command"), so generated events reach the branches the
 * hook actually has even when it comes from the store without fixtures. The bundle is only scanned as
 * text, never evaluated. Deduplicated, capped at 500 words of at most 200 characters.
 */
export function fuzzDictionary(values: readonly unknown[], bundleCode?: string): string[] {
  const words = new Set<string>();
  for (const value of values) collectStrings(value, words);
  if (bundleCode !== undefined) {
    for (const match of bundleCode.matchAll(LITERAL)) {
      if (words.size >= MAX_WORDS) break;
      const raw = match[1] ?? match[2] ?? match[3];
      if (raw !== undefined && !raw.includes("\\")) words.add(raw);
    }
    for (const match of bundleCode.matchAll(PROPERTY)) {
      if (words.size >= MAX_WORDS) break;
      if (match[1] !== undefined) words.add(match[1]);
    }
  }
  return [...words];
}

function collectStrings(value: unknown, into: Set<string>): void {
  if (into.size >= MAX_WORDS) return;
  if (typeof value === "string") {
    if (value.length <= MAX_WORD_LENGTH) into.add(value);
  } else if (Array.isArray(value)) {
    for (const item of value) collectStrings(item, into);
  } else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      into.add(key);
      collectStrings(item, into);
    }
  }
}
