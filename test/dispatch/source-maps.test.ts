import { describe, expect, it } from "vitest";
import { mapStack, SourceMapIndex, SourceMaps } from "../../src/dispatch/stack-map.js";

// Generated line 1, column 0 → index.ts line 3, column 4 (segment "AAEI": 0, source 0, +2 lines, +4 columns).
const MAP = JSON.stringify({ version: 3, sources: ["index.ts"], mappings: "AAEI" });
const FRAME = { file: "bundle", line: 1, column: 1 };

describe("source maps of failing bundles", () => {
  it("maps a bundle frame to the author's file, line and column", () => {
    expect(mapStack([FRAME], new SourceMapIndex(MAP))).toEqual([{ file: "index.ts", line: 3, column: 5 }]);
  });

  it("maps nothing through a map that cannot be read", () => {
    expect(mapStack([FRAME], new SourceMapIndex("{not json"))).toEqual([]);
  });

  it("keeps one parsed index per bundle and forgets the least recently failing past its bound", () => {
    const maps = new SourceMaps(2);
    const a = maps.of("sha256-a", MAP);
    expect(maps.of("sha256-a", MAP)).toBe(a);
    const b = maps.of("sha256-b", MAP);
    maps.of("sha256-a", MAP); // a is now the most recent
    maps.of("sha256-c", MAP); // evicts b
    expect(maps.of("sha256-a", MAP)).toBe(a);
    expect(maps.of("sha256-b", MAP)).not.toBe(b);
  });
});
