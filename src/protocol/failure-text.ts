import type { Failure } from "./outcome.js";

const SHOWN_ISSUES = 3;

/**
 * A failure as one line for people: `code: message`, where it was thrown (`(at index.ts:12:7)`), then for `invalid_result` the zod issues that say
 * what was wrong and where (`result.type: Invalid option: expected one of "rewrite"|"block"|"stop"`), up
 * to three. The text may carry tenant-originated words: pass it through the printable-text function before
 * a terminal.
 */
export function failureText(failure: Failure): string {
  const where = failure.stack?.[0];
  const at = where === undefined ? "" : ` (at ${where.file}:${where.line}:${where.column})`;
  const head = `${failure.code}: ${failure.message}${at}`;
  const issues = failure.issues ?? [];
  if (issues.length === 0) return head;
  const shown = issues.slice(0, SHOWN_ISSUES).map((issue) => {
    const path = ["result", ...issue.path].map((key, i) =>
      typeof key === "number" ? `[${key}]` : i === 0 ? key : `.${key}`,
    );
    return `${path.join("")}: ${issue.message}`;
  });
  const more = issues.length > SHOWN_ISSUES ? ` (+${issues.length - SHOWN_ISSUES} more)` : "";
  return `${head} — ${shown.join("; ")}${more}`;
}
