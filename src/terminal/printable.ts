/**
 * Characters a terminal acts on or hides instead of showing: C0 controls (ESC, BEL, CR, LF, TAB, …), DEL
 * and C1 controls (CSI U+009B and OSC U+009D start escape sequences on their own), format characters
 * (bidi embeddings, overrides and isolates, U+200E/U+200F, U+061C, zero-width and tag characters), the
 * line and paragraph separators, and lone surrogates (`\p{Cs}` under the `u` flag matches only those).
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;
const UNPRINTABLE_BUT_NEWLINE = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;
const SHORT: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

declare const PRINTED: unique symbol;

/**
 * Text made safe for a terminal by this module (`printable`, `line`, `lines`, `printableJson`): the only
 * text the CLI's writers take (`CliIO.stdout`/`stderr`), so an output site that forgets to escape a
 * tenant's field does not type-check. A plain string becomes one only through these functions.
 */
export type Printed = string & { readonly [PRINTED]: true };

/**
 * Longest a single interpolated value of `line` is shown, in characters (after escaping): past it the
 * value is cut and the number of characters left out is said. `--json` keeps the text whole.
 */
export const MAX_FIELD_CHARS = 2_000;

export interface PrintableOptions {
  /**
   * Keep `\n` as a line break, for multi-line text the caller frames line by line (a stack trace, a list of
   * problems). Default false: the result is one line, so tenant text cannot start a line of its own.
   */
  readonly keepNewlines?: boolean;
}

/**
 * Text that came from a tenant (a thrown message, a log line, a block reason, a stack trace, a fixture's
 * name, a stored uploader or config) made safe to write to a terminal: every character of `UNPRINTABLE` is
 * written as a visible escape, `\n` `\r` `\t`, `\x1b` (below U+0100), `\u202e`, `\u{e0041}` (astral), so
 * nothing it prints can move the cursor, recolour, retitle, ring, reorder or hide text. Everything else,
 * including a literal backslash, is kept: the result is for people, not to be parsed back.
 * `--json` output takes `printableJson` instead, which keeps the exact text.
 *
 * @example
 * printable("ok\x1b[2K\rforged\u202e"); // "ok\\x1b[2K\\rforged\\u202e"
 */
export function printable(text: string, options: PrintableOptions = {}): Printed {
  const pattern = options.keepNewlines === true ? UNPRINTABLE_BUT_NEWLINE : UNPRINTABLE;
  return text.replace(pattern, visibleEscape) as Printed;
}

/**
 * Human output with every interpolated value passed through `printable` and cut at `MAX_FIELD_CHARS`: the
 * tag, not each call site, escapes the fields, so a field added to a report later cannot forget it. Only
 * the template's own text (the CLI's) may hold line breaks; a value never starts a line. Values the CLI
 * formats itself (sizes, durations) are escaped too, which leaves them unchanged.
 *
 * @example
 * line`  costliest: ${path} took ${ms}\n`; // a path "a\nclean" stays on this line: "a\\nclean"
 */
export function line(strings: TemplateStringsArray, ...values: unknown[]): Printed {
  let text = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) text += field(String(values[i])) + (strings[i + 1] ?? "");
  return text as Printed;
}

/** Lines already made printable, each ended by a line break: what a command writes in one go. */
export function lines(parts: readonly Printed[]): Printed {
  return parts.map((part) => `${part}\n`).join("") as Printed;
}

function field(text: string): string {
  const shown = printable(text);
  if (shown.length <= MAX_FIELD_CHARS) return shown;
  return `${shown.slice(0, MAX_FIELD_CHARS)}… (${shown.length - MAX_FIELD_CHARS} more characters)`;
}

/** `text` cut to at most `width` characters, the cut marked with an ellipsis. */
export function clipped(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

/** Tenant text as one terminal line: whitespace runs folded to one space, at most `width` characters, printable. */
export function oneLine(text: string, width: number): Printed {
  return printable(clipped(text.replace(/\s+/g, " ").trim(), width));
}

/**
 * `JSON.stringify(value)` with the characters it leaves raw and a terminal acts on (C1 controls, DEL,
 * format and bidi characters, U+2028/U+2029) written as `\uXXXX` escapes: parsing it gives back exactly
 * `value`, printing it moves nothing. (JSON.stringify already escapes C0 controls and lone surrogates.)
 *
 * @example
 * printableJson({ reason: "\u202eevil" }); // '{"reason":"\\u202eevil"}'
 */
export function printableJson(value: unknown): Printed {
  // Outside strings JSON holds only ASCII punctuation, digits and letters, so every match is inside one.
  return JSON.stringify(value).replace(UNPRINTABLE, jsonEscape) as Printed;
}

function visibleEscape(character: string): string {
  const short = SHORT[character];
  if (short !== undefined) return short;
  const code = character.codePointAt(0) ?? 0;
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, "0")}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, "0")}`;
  return `\\u{${code.toString(16)}}`;
}

function jsonEscape(character: string): string {
  let escaped = "";
  for (let i = 0; i < character.length; i++) escaped += `\\u${character.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return escaped;
}
