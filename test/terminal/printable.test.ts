import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { printable, printableJson } from "../../src/terminal/index.js";

/** What must never reach a terminal raw (a superset of what the issue lists). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const RAW = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]|\p{Cs}/u;

describe("printable", () => {
  it("escapes ESC, BEL, CR, LF, TAB and DEL visibly", () => {
    expect(printable("a\u001b[2Kb\u0007c\rd\ne\tf\u007fg\u0000")).toBe("a\\x1b[2Kb\\x07c\\rd\\ne\\tf\\x7fg\\x00");
  });

  it("escapes C1 controls, including CSI and OSC", () => {
    expect(printable("\u009b31m\u009d0;title\u009c\u0085")).toBe("\\x9b31m\\x9d0;title\\x9c\\x85");
  });

  it("escapes every bidi control", () => {
    const bidi = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c";
    expect(printable(bidi)).toBe(
      "\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c",
    );
  });

  it("escapes zero-width, tag and separator characters", () => {
    expect(printable("a\u200bb\ufeffc\u2028d\u2029e\u{e0041}")).toBe("a\\u200bb\\ufeffc\\u2028d\\u2029e\\u{e0041}");
  });

  it("escapes lone surrogates and keeps paired ones", () => {
    expect(printable("\ud800x\udc00😀")).toBe("\\ud800x\\udc00😀");
  });

  it("keeps ordinary text, punctuation, backslashes and non-Latin scripts as they are", () => {
    const text = "blocked: rm -rf / → “no” \\x1b ✓ ✗ ▶ 日本語 العربية ε";
    expect(printable(text)).toBe(text);
  });

  it("keeps newlines only when asked, and still escapes CR then", () => {
    expect(printable("Error: boom\n    at f (x.js:1:1)\r\u001b[A", { keepNewlines: true })).toBe(
      "Error: boom\n    at f (x.js:1:1)\\r\\x1b[A",
    );
  });

  it("never lets a raw character through, whatever the input", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        expect(printable(text)).not.toMatch(RAW);
        expect(printable(text, { keepNewlines: true }).replaceAll("\n", "")).not.toMatch(RAW);
      }),
    );
  });

  it("is idempotent: escaping escaped text changes nothing", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (text) => printable(printable(text)) === printable(text)));
  });
});

describe("printableJson", () => {
  it("parses back to exactly the value, with nothing raw in the text", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: "binary" }), (value, text) => {
        for (const v of [value, { text }, [text, value]]) {
          const json = printableJson(v);
          expect(json).not.toMatch(RAW);
          expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(v)));
        }
      }),
    );
  });

  it("escapes C1, DEL, bidi and tag characters that JSON.stringify leaves raw", () => {
    expect(printableJson({ reason: "\u009b2J\u007f\u202e\u2028\u{e0041}" })).toBe(
      '{"reason":"\\u009b2J\\u007f\\u202e\\u2028\\udb40\\udc41"}',
    );
  });
});
