import { Limits, RENAMED_LIMITS } from "./limits.js";

/**
 * The small toolkit every option check shares, so that a wrong option reads the same wherever it is
 * caught: "Expected `name` to be …, got `value`".
 */

/** How an option error shows the value it got: strings quoted, numbers and the like as written, the rest by kind. */
export function describeValue(value: unknown): string {
  if (typeof value === "function") return "a function";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * Parses sandbox limits; `fail` makes the caller's error class from the message, which names the first
 * wrong field (`Invalid \`limits.timeoutMs\`, got \`-1\`: …`).
 */
export function parseLimits(input: unknown, fail: (message: string) => Error): Limits {
  const parsed = Limits.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue?.code === "unrecognized_keys") {
    const old = issue.keys.find((key) => RENAMED_LIMITS[key] !== undefined);
    if (old !== undefined) {
      throw fail(
        `\`limits.${old}\` is now \`limits.${RENAMED_LIMITS[old]}\`: it counts characters (UTF-16 code units), not bytes`,
      );
    }
  }
  const path = issue?.path.map(String) ?? [];
  let got: unknown = input;
  for (const key of path)
    got = typeof got === "object" && got !== null ? (got as Record<string, unknown>)[key] : undefined;
  const field = path.length === 0 ? "limits" : `limits.${path.join(".")}`;
  const shown = path.length === 0 ? describeValue(input) : describeValue(got);
  throw fail(`Invalid \`${field}\`, got \`${shown}\`: ${issue?.message ?? "not a limits object"}`);
}

/**
 * Hands `event` to a listener. A listener must not throw; if it does, the error is dropped, as a
 * listener's bug is not the caller's failure (events report what happened, they never steer it).
 */
export function notify<E>(listener: ((event: E) => void) | undefined, event: E): void {
  if (listener === undefined) return;
  try {
    listener(event);
  } catch {
    // Dropped on purpose: see above.
  }
}

/** `notify` bound to one listener, or a no-op without one. */
export function notifier<E>(listener: ((event: E) => void) | undefined): (event: E) => void {
  return listener === undefined ? () => {} : (event) => notify(listener, event);
}
