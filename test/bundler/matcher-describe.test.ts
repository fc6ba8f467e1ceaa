import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { BundleError, compileHook, describeBundle } from "../../src/bundler/index.js";
import type { BundleManifest, HookExecutor } from "../../src/protocol/index.js";
import { tempHooks } from "./temp-hooks.js";

/**
 * Hostile matcher lists: the describe step reads a handler's `tools` once, in a throwaway isolate, and the
 * host validates what it read (zod, capped); nothing a tenant does later changes what the manifest says.
 */
const MODULES: Record<string, string> = {
  "huge/index.ts": `export default { toolCall: { tools: Array.from({ length: 100000 }, (_, i) => "t" + i), handler() {} } };\n`,
  "long-glob/index.ts": `export default { toolCall: { tools: ["a".repeat(129)], handler() {} } };\n`,
  "rope-glob/index.ts": `let s = "x"; for (let i = 0; i < 24; i++) s += s;\nexport default { toolCall: { tools: [s], handler() {} } };\n`,
  "regex/index.ts": `export default { toolCall: { tools: ["^(a+)+$"], handler() {} } };\n`,
  "not-strings/index.ts": `export default { toolCall: { tools: ["shell", 42], handler() {} } };\n`,
  "not-array/index.ts": `export default { toolCall: { tools: "shell", handler() {} } };\n`,
  "empty/index.ts": `export default { toolCall: { tools: [], handler() {} } };\n`,
  "proxy-length/index.ts": `const tools = new Proxy(["shell"], { get: (t, k) => (k === "length" ? 2 ** 32 - 1 : "shell") });\nexport default { toolCall: { tools, handler() {} } };\n`,
  "throwing-getter/index.ts": `export default { toolCall: { get tools() { throw new Error("no tools for you"); }, handler() {} } };\n`,
  "lying-getter/index.ts": `let reads = 0;\nexport default { toolCall: { get tools() { reads++; return reads === 1 ? ["shell"] : ["*"]; }, handler() {} } };\n`,
  "spinning-getter/index.ts": `export default { toolCall: { get tools() { for (;;) {} }, handler() {} } };\n`,
  "no-handler/index.ts": `export default { toolCall: { tools: ["shell"] } };\n`,
  "typo/index.ts": `export default { toolCall: { tool: ["shell"], handler() {} } };\n`,
  "not-a-tool-point/index.ts": `export default { turnEnd: { tools: ["shell"], handler() {} } };\n`,
  "observe-function/index.ts": `export default { observe() {} };\n`,
  "observe-unknown/index.ts": `export default { observe: { toolresult() {} } };\n`,
  "observe-empty/index.ts": `export default { observe: {} };\n`,
  "many-keys/index.ts": `export default { toolCall: Object.fromEntries(Array.from({ length: 9 }, (_, i) => ["k" + i, i])) };\n`,
  "ok/index.ts": `export default {
  toolCall: { tools: ["shell", "git_*", "read_?ile"], handler() {} },
  toolResult() {},
  observe: { toolResult: { tools: ["*"], handler() {} }, runEnd() {} },
};\n`,
};

let executor: HookExecutor;
let cwd: string;
let remove: () => Promise<void>;

beforeAll(async () => {
  executor = await createHookExecutor({ mode: "process", workers: 1, spareWorker: false });
  ({ dir: cwd, remove } = await tempHooks(MODULES));
});
afterAll(async () => {
  await executor?.close();
  await remove?.();
});

async function manifestOf(entry: string): Promise<BundleManifest> {
  return describeBundle(await compileHook(entry, { cwd }), executor);
}

async function refusal(entry: string): Promise<BundleError> {
  const error = await manifestOf(entry).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BundleError);
  return error as BundleError;
}

describe("tool matchers at describe (process sandbox)", () => {
  it("records the decision and observe matchers by point", async () => {
    const manifest = await manifestOf("ok");
    expect(manifest.hookPoints).toEqual(["tool.call", "tool.result"]);
    expect(manifest.tools).toEqual({ "tool.call": ["shell", "git_*", "read_?ile"] });
    expect(manifest.observe).toEqual({ hookPoints: ["tool.result", "run.end"], tools: { "tool.result": ["*"] } });
  });

  it.each([
    ["huge", /toolCall\.tools.*expected 1 to 64 globs/],
    ["long-glob", /toolCall\.tools.*item 0: Too big: expected string to have <=128 characters/],
    ["rope-glob", /toolCall\.tools.*item 0: not a string of at most 128 characters/],
    ["regex", /toolCall\.tools.*item 0: Expected a tool-name glob of letters, digits/],
    ["not-strings", /toolCall\.tools.*item 1: not a string of at most 128 characters/],
    ["not-array", /`toolCall\.tools` is not a list of tool-name globs: not an array/],
    ["empty", /`toolCall\.tools` is not a list of tool-name globs: Too small/],
    ["proxy-length", /toolCall\.tools.*expected 1 to 64 globs/],
    ["no-handler", /`toolCall\.handler` is a undefined, not a function/],
    ["typo", /`toolCall` has a key `tool`: a matched handler is `\{ tools, handler \}`/],
    ["not-a-tool-point", /only toolCall, toolResult and toolInvalid handlers take tool matchers/],
    ["observe-function", /`observe` is a function: it holds observe-only handlers/],
    ["observe-empty", /`observe` holds no handlers/],
    ["many-keys", /toolCall has 9 keys/],
  ])("refuses %s as invalid_export, saying what is wrong", async (entry, message) => {
    const error = await refusal(entry);
    expect(error.code).toBe("invalid_export");
    expect(error.problems[0]?.message).toMatch(message);
  });

  it("names an unknown observe handler with a did-you-mean", async () => {
    const error = await refusal("observe-unknown");
    expect(error.code).toBe("unknown_handler");
    expect(error.problems[0]?.message).toMatch(
      /^Unknown handler `observe\.toolresult` \(did you mean `toolResult`\?\)/,
    );
  });

  it("reports a getter that throws as the module failing to describe, naming the handler", async () => {
    const error = await refusal("throwing-getter");
    expect(error.code).toBe("describe_failed");
    expect(error.problems[0]?.message).toContain(
      "Reading the default export's toolCall threw: Error: no tools for you",
    );
  });

  it("reports a getter that spins as a describe timeout", async () => {
    const error = await refusal("spinning-getter");
    expect(error.code).toBe("describe_failed");
    expect(error.problems[0]?.message).toContain("(timeout)");
  });

  it("keeps what a lying getter said the one time it was read", async () => {
    expect((await manifestOf("lying-getter")).tools).toEqual({ "tool.call": ["shell"] });
  });
});
