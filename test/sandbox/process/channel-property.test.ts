import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcessExecutor } from "../../../sandbox/supervisor/create-executor.js";
import type { ProcessExecutor } from "../../../sandbox/supervisor/process-executor.js";
import { invokeHook } from "../../../src/dispatch/index.js";
import { Limits } from "../../../src/protocol/index.js";
import { hookCall, hooksBundle, tenant } from "../bundle-fixtures.js";

/**
 * Arbitrary JSON (any Unicode, lone surrogates, deep nesting) crosses host → worker → isolate → worker →
 * host unchanged, alone and in pipelined batches of random size over both workers.
 */

const limits = Limits.parse({ maxEventChars: 256 * 1024, maxResultChars: 256 * 1024 });
const echo = hooksBundle("{ toolCall(event) { return { type: 'rewrite', args: { payload: event.payload } }; } }");
let executor: ProcessExecutor;
beforeAll(async () => {
  executor = await startProcessExecutor({ workers: 2, spareWorker: false, limits });
});
afterAll(() => executor.close());

const payload = fc.jsonValue({ maxDepth: 4, stringUnit: "binary" });

/** What the host hands back: JSON round-tripped, minus `__proto__` keys, which parseGuestReply drops on purpose. */
const expected = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value), (key, v: unknown) => (key === "__proto__" ? undefined : v));

async function roundTrip(value: unknown, tenantName: string): Promise<unknown> {
  const call = hookCall(tenant(tenantName), echo, {
    event: { call: { id: "c1", name: "echo", args: {} }, batch: { index: 0, size: 1 }, payload: value },
  });
  const { outcome } = await invokeHook(executor, ...call, limits);
  if (outcome.type !== "decided") throw new Error(JSON.stringify(outcome).slice(0, 300));
  const result: unknown = outcome.result;
  return typeof result === "object" && result !== null && "args" in result ? result.args : undefined;
}

describe("the process channel", () => {
  it("carries arbitrary JSON both ways unchanged", async () => {
    await fc.assert(
      fc.asyncProperty(payload, async (value) => {
        expect(await roundTrip(value, "prop-a")).toEqual({ payload: expected(value) });
      }),
      { numRuns: 80 },
    );
  });

  it("answers every call of a pipelined batch with its own payload", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(payload, { minLength: 1, maxLength: 40 }), async (values) => {
        const answers = await Promise.all(values.map((v, i) => roundTrip(v, `prop-${i % 5}`)));
        expect(answers).toEqual(values.map((v) => ({ payload: expected(v) })));
      }),
      { numRuns: 25 },
    );
  });
});
