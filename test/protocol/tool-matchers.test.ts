import { describe, expect, it } from "vitest";
import { compileToolGlobs, globMatch, ToolGlob, ToolGlobs } from "../../src/protocol/index.js";

describe("tool-name globs", () => {
  it.each([
    ["shell", "shell", true],
    ["shell", "shell2", false],
    ["git_*", "git_push", true],
    ["git_*", "git_", true],
    ["git_*", "gitpush", false],
    ["*_file", "read_file", true],
    ["read_?ile", "read_file", true],
    ["read_?ile", "read_ile", false],
    ["*", "", true],
    ["a*b*c", "aXbYc", true],
    ["a*b*c", "aXbY", false],
    ["*.*", "fs.read", true],
    ["??", "ab", true],
    ["??", "abc", false],
  ])("%s against %s is %s", (glob, name, expected) => {
    expect(globMatch(glob, name)).toBe(expected);
  });

  it("matches a pathological glob against a long name without backtracking blow-up", () => {
    const glob = `${"*a".repeat(60)}*b`;
    expect(ToolGlob.safeParse(glob).success).toBe(true);
    expect(globMatch(glob, "a".repeat(64))).toBe(false);
    expect(globMatch(glob, `${"a".repeat(63)}b`)).toBe(true);
  });

  it("compiles a list once: exact names, wildcards, a lone star", () => {
    const test = compileToolGlobs(["shell", "git_*"]);
    expect(["shell", "git_push", "read_file", "git_push"].map(test)).toEqual([true, true, false, true]);
    expect(compileToolGlobs(["*", "shell"])("anything")).toBe(true);
    expect(compileToolGlobs(["shell"])("shell2")).toBe(false);
  });

  it("accepts tool-name characters and the two wildcards, nothing else", () => {
    for (const ok of ["shell", "git_*", "fs.read-?", "*"]) expect(ToolGlob.safeParse(ok).success).toBe(true);
    for (const bad of ["", "^shell$", "[a-z]*", "{a,b}", "a\\*", "sh ell", "a".repeat(129), "ℝ"]) {
      expect(ToolGlob.safeParse(bad).success).toBe(false);
    }
    expect(ToolGlobs.safeParse([]).success).toBe(false);
    expect(ToolGlobs.safeParse(Array(65).fill("a")).success).toBe(false);
    expect(ToolGlobs.safeParse(Array(64).fill("a")).success).toBe(true);
  });
});
