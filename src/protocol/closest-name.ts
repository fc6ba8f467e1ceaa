/**
 * The candidate `word` most likely meant, if one is within `maxDistance` edits (Levenshtein) after
 * `normalize`; the closest wins, ties go to the earlier candidate. For did-you-mean hints.
 */
export function closestName(
  word: string,
  candidates: readonly string[],
  options: { readonly maxDistance?: number; readonly normalize?: (name: string) => string } = {},
): string | undefined {
  const max = options.maxDistance ?? 2;
  const normalize = options.normalize ?? ((name: string) => name);
  const wanted = normalize(word);
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(wanted, normalize(name), max);
    if (distance <= max && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** Levenshtein distance, giving up (returning `max + 1`) once it must exceed `max`. */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > max) return max + 1;
    previous = current;
  }
  return previous[b.length] ?? max + 1;
}
