import { expect } from "vitest";

/**
 * Tenant text that tries to take over the operator's terminal: cursor up + erase line + carriage return to
 * overwrite the line above with a decision attributed to another tenant, OSC 0 (window title) ended by BEL,
 * C1 CSI and OSC 8 (a hyperlink), a bidi override and isolate, and a newline starting a forged line.
 */
export const FORGERY =
  "ok\u001b[1A\u001b[2K\r    tool.call       tenant:globex@v1        no-op\u001b]0;owned\u0007\u009b2J\u009d8;;http://x\u009c\u202eevil\u2066\nforged line";

/** What must never reach a terminal raw. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * The output shows the forgery only escaped: no control or bidi character (line breaks are the output's
 * own), no line of its own for the forged text, and the escapes visible where it was.
 */
export function expectContained(output: string): void {
  expectNothingRaw(output);
  expect(output).toContain("\\x1b[1A\\x1b[2K");
}

/** No control or bidi character but the output's own line breaks, and no line of its own for forged text. */
export function expectNothingRaw(output: string): void {
  expect(output).not.toMatch(RAW);
  for (const line of output.split("\n")) expect(line.startsWith("forged line")).toBe(false);
}

/** `value` holds the forgery exactly (for `--json`, which keeps tenant text as it was). */
export function containsExactly(value: unknown): boolean {
  if (typeof value === "string") return value.includes(FORGERY);
  if (Array.isArray(value)) return value.some(containsExactly);
  if (typeof value === "object" && value !== null) return Object.values(value).some(containsExactly);
  return false;
}
