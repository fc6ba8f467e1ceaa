import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { BundleError, compileHook, describeBundle } from "../../src/bundler/index.js";
import { type HookExecutor, SDK_VERSION } from "../../src/protocol/index.js";
import { tempHooks } from "./temp-hooks.js";

let executor: HookExecutor;
let cwd: string;
let remove: () => Promise<void>;

beforeAll(async () => {
  executor = await createHookExecutor({ mode: "process", workers: 1, spareWorker: false });
  ({ dir: cwd, remove } = await tempHooks({
    "misspelled/index.ts": "export default { toolcall() {}, turnEnd() {} };\n",
    "not-a-function/index.ts": 'export default { toolCall: "block everything" };\n',
    "not-an-object/index.ts": "export default 42;\n",
    "throws/index.ts": 'throw new Error("config missing");\nexport default {};\n',
  }));
});
afterAll(async () => {
  await executor?.close();
  await remove?.();
});

async function describeError(entry: string): Promise<BundleError> {
  const built = await compileHook(entry, { cwd });
  const error = await describeBundle(built, executor).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BundleError);
  return error as BundleError;
}

describe("describeBundle in the real sandbox (process mode)", () => {
  it.each([
    ["hooks/block-destructive-shell", ["tool.call"]],
    ["hooks/redact-secrets", ["tool.result"]],
  ])("lists the hook points of %s", async (entry, hookPoints) => {
    const built = await compileHook(entry);
    expect(await describeBundle(built, executor)).toEqual({
      hash: built.hash,
      bytes: built.bytes,
      hookPoints,
      sdkVersion: SDK_VERSION,
      entry,
    });
  });

  it("refuses a misspelled handler with a did-you-mean", async () => {
    const error = await describeError("misspelled");
    expect(error.code).toBe("unknown_handler");
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]?.message).toMatch(
      /^Unknown handler `toolcall` \(did you mean `toolCall`\?\)\. Valid handlers: runStart, /,
    );
  });

  it("refuses a handler that is not a function, naming it", async () => {
    const error = await describeError("not-a-function");
    expect(error.code).toBe("invalid_export");
    expect(error.problems[0]?.message).toContain("toolCall");
  });

  it("refuses a default export that is not an object", async () => {
    expect((await describeError("not-an-object")).code).toBe("invalid_export");
  });

  it("reports a bundle that throws while loading", async () => {
    const error = await describeError("throws");
    expect(error.code).toBe("describe_failed");
    expect(error.problems[0]?.message).toContain("config missing");
  });
});
