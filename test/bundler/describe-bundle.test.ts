import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BundleError,
  buildBundle,
  type CompiledHook,
  compileHook,
  describeBundle,
  suggestHandler,
} from "../../src/bundler/index.js";
import { HOOK_POINT_NAMES, handlerOf, SDK_VERSION, TenantId } from "../../src/protocol/index.js";
import { described, fakeExecutor } from "./fake-executor.js";
import { HOOK, tempHooks } from "./temp-hooks.js";

let built: CompiledHook;
let cwd: string;
let remove: () => Promise<void>;

beforeAll(async () => {
  ({ dir: cwd, remove } = await tempHooks({ "hook/index.ts": HOOK }));
  built = await compileHook("hook", { cwd });
});
afterAll(() => remove());

async function describeError(handlers: string[]): Promise<BundleError> {
  const error = await describeBundle(built, fakeExecutor(described(handlers))).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BundleError);
  return error as BundleError;
}

describe("describeBundle", () => {
  it("returns the manifest with the exported hook points in protocol order", async () => {
    const executor = fakeExecutor(described(["turnEnd", "toolCall", "runStart"]));
    const manifest = await describeBundle(built, executor);
    expect(manifest).toEqual({
      hash: built.hash,
      bytes: built.bytes,
      hookPoints: ["run.start", "tool.call", "turn.end"],
      sdkVersion: SDK_VERSION,
      entry: "hook",
    });
  });

  it("hands the sandbox the bundle's hash and code, the tenant and the signal", async () => {
    const executor = fakeExecutor(described([]));
    const signal = new AbortController().signal;
    await describeBundle(built, executor, { tenantId: TenantId.parse("acme"), signal });
    await describeBundle(built, executor);
    expect(executor.described).toEqual([
      { tenantId: "acme", bundle: { hash: built.hash, code: built.code }, signal },
      { tenantId: "isohook-bundler", bundle: { hash: built.hash, code: built.code }, signal: undefined },
    ]);
  });

  it("accepts every handler name and an empty hooks object", async () => {
    const all = await describeBundle(built, fakeExecutor(described(HOOK_POINT_NAMES.map(handlerOf))));
    expect(all.hookPoints).toEqual(HOOK_POINT_NAMES);
    const none = await describeBundle(built, fakeExecutor(described([])));
    expect(none.hookPoints).toEqual([]);
  });

  it("refuses an unknown handler key, listing the valid names with a did-you-mean", async () => {
    const error = await describeError(["toolcall"]);
    expect(error.code).toBe("unknown_handler");
    expect(error.problems).toEqual([
      {
        message: `Unknown handler \`toolcall\` (did you mean \`toolCall\`?). Valid handlers: ${HOOK_POINT_NAMES.map(handlerOf).join(", ")}, observe.`,
      },
    ]);
    expect(error.message).toMatch(/^Cannot use hook: it exports unknown hook handlers\n {2}Unknown handler `toolcall`/);
  });

  it("lists every unknown key, with a suggestion only where one is close", async () => {
    const error = await describeError(["toolCall", "tool.call", "banana", "TurnEnd"]);
    expect(error.problems.map((p) => p.message.split(". Valid")[0])).toEqual([
      "Unknown handler `tool.call` (did you mean `toolCall`?)",
      "Unknown handler `banana`",
      "Unknown handler `TurnEnd` (did you mean `turnEnd`?)",
    ]);
  });

  it.each([
    ["toolcall", "toolCall"],
    ["tool.call", "toolCall"],
    ["ToolCall", "toolCall"],
    ["tool_call", "toolCall"],
    ["TOOL-CALL", "toolCall"],
    ["toolCal", "toolCall"],
    ["toolCalls", "toolCall"],
    ["tool.result", "toolResult"],
    ["turn_end", "turnEnd"],
    ["outputvalidate", "outputValidate"],
    ["onToolCall", "toolCall"],
    ["banana", undefined],
    ["default", undefined],
    ["", undefined],
  ])("suggests for %j: %s", (key, expected) => {
    expect(suggestHandler(key)).toBe(expected);
  });

  it.each([
    ["threw", "ReferenceError: window is not defined", "describe_failed"],
    ["timeout", "The bundle did not load within 1000 ms", "describe_failed"],
    ["sandbox_crashed", "The worker exited", "describe_failed"],
    ["invalid_result", "The default export's `toolCall` is a string, not a function", "invalid_export"],
    ["invalid_result", "The bundle has no default export object", "invalid_export"],
  ] as const)("turns a %s sandbox failure into %s keeping its message", async (failureCode, message, code) => {
    const executor = fakeExecutor({ type: "failed", failure: { code: failureCode, message }, cpuMs: 0, runMs: 1 });
    const error = await describeBundle(built, executor).then(
      () => undefined,
      (e: unknown) => e as BundleError,
    );
    expect(error).toBeInstanceOf(BundleError);
    expect(error?.code).toBe(code);
    expect(error?.problems).toEqual([{ message: `${message} (${failureCode})` }]);
  });
});

describe("describeBundle with hostile names from the sandbox", () => {
  it("escapes terminal control and bidi characters in the printed message, keeping the raw problem", async () => {
    const key = "\u001b[2J\u001b]8;;http://evil\u0007toolCall\u202e\r";
    const error = await describeError([key]);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence.
    expect(error.message.replaceAll("\n", "")).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
    expect(error.message).toContain("Unknown handler `\\x1b[2J\\x1b]8;;http://evil\\x07toolCall\\u202e\\r`");
    expect(error.problems[0]?.message).toContain(key);
  });

  it("escapes them in a sandbox failure message too", async () => {
    const executor = fakeExecutor({
      type: "failed",
      failure: { code: "threw", message: "Error: \u009b31mred\nline two" },
      cpuMs: 0,
      runMs: 1,
    });
    const error = await describeBundle(built, executor).then(
      () => undefined,
      (e: unknown) => e as BundleError,
    );
    expect(error?.message.split("\n")).toEqual([
      "Cannot use hook: the sandbox could not load it",
      "  Error: \\x9b31mred\\nline two (threw)",
    ]);
  });
});

describe("buildBundle", () => {
  it("bundles and describes in one step", async () => {
    const executor = fakeExecutor(described(["toolCall"]));
    const bundle = await buildBundle("hook", { cwd, executor });
    expect(bundle).toEqual({
      code: built.code,
      sourceMap: built.sourceMap,
      manifest: {
        hash: built.hash,
        bytes: built.bytes,
        hookPoints: ["tool.call"],
        sdkVersion: SDK_VERSION,
        entry: "hook",
      },
    });
    expect(executor.closed).toBe(false);
  });

  it("does not reach the sandbox when bundling fails", async () => {
    const executor = fakeExecutor(described(["toolCall"]));
    await expect(buildBundle("missing", { cwd, executor })).rejects.toMatchObject({ code: "entry_not_found" });
    expect(executor.described).toEqual([]);
  });
});
