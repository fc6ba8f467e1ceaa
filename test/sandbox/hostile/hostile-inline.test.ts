import { afterAll, describe, expect, it } from "vitest";
import { createInlineExecutor } from "../../../sandbox/worker/index.js";
import { invokeHook } from "../../../src/dispatch/invoke-hook.js";
import { FailureCode, type HookOutcome, Limits } from "../../../src/protocol/index.js";
import { HOSTILE_CASES, HOSTILE_LIMITS, hostileCall } from "../../fixtures/hostile/index.js";
import { HEALTHY, hookCall, tenant } from "../bundle-fixtures.js";

const limits = Limits.parse(HOSTILE_LIMITS);
const executor = createInlineExecutor({ limits: HOSTILE_LIMITS, quiet: true });
afterAll(() => executor.close());

const hostPrototypeNames = Object.getOwnPropertyNames(Object.prototype).sort();

function codeOf(outcome: HookOutcome): string {
  return outcome.type === "failed" ? outcome.failure.code : "ok";
}

async function healthy(tenantName: string): Promise<HookOutcome> {
  return (await invokeHook(executor, ...hookCall(tenant(tenantName), HEALTHY), limits)).outcome;
}

describe("hostile corpus", () => {
  it("has at least 40 distinct cases, each expecting a known outcome code", () => {
    expect(new Set(HOSTILE_CASES.map((c) => c.name)).size).toBeGreaterThanOrEqual(40);
    for (const c of HOSTILE_CASES) {
      expect(c.expect === "ok" || FailureCode.safeParse(c.expect).success, c.name).toBe(true);
      expect(c.description.length, c.name).toBeGreaterThan(10);
    }
    expect(HOSTILE_CASES.filter((c) => c.fatal).map((c) => c.name)).toContain("memory-array-fill");
  });
});

describe("hostile corpus through the inline executor (cases that cannot kill the process)", () => {
  const cases = HOSTILE_CASES.filter((c) => !c.fatal);

  it.each(cases.map((c, i) => [c.name, c.expect, c, i] as const))(
    "%s ends as %s and harms no one else",
    async (_name, _expect, c, i) => {
      expect(codeOf(await healthy("bystander"))).toBe("ok");

      const victim = tenant(`victim-${i}`);
      const { outcome } = await invokeHook(executor, ...hostileCall(c, victim), limits);
      expect(codeOf(outcome), JSON.stringify(outcome).slice(0, 500)).toBe(c.expect);
      if (c.reason !== undefined) {
        expect(outcome.type === "decided" && outcome.result).toMatchObject({ reason: c.reason });
      }
      expect(outcome.logs.length).toBeLessThanOrEqual(limits.maxLogLines + 1);
      expect(JSON.stringify(outcome.logs).length).toBeLessThanOrEqual(limits.maxLogChars + 200);

      // The host stays unpolluted and responsive; the same tenant and another one run healthy hooks.
      expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(hostPrototypeNames);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      await new Promise((resolve) => setImmediate(resolve));
      expect(await invokeHook(executor, ...hookCall(victim, HEALTHY), limits)).toMatchObject({
        outcome: { type: "decided", result: { type: "block", reason: "healthy:shell" } },
      });
      expect(codeOf(await healthy("bystander"))).toBe("ok");
    },
  );
});
