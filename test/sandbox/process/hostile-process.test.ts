import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcessExecutor } from "../../../sandbox/supervisor/create-executor.js";
import type { SupervisorEvent } from "../../../sandbox/supervisor/index.js";
import type { ProcessExecutor } from "../../../sandbox/supervisor/process-executor.js";
import { invokeHook } from "../../../src/dispatch/index.js";
import { type HookOutcome, Limits, type TenantId } from "../../../src/protocol/index.js";
import { HOSTILE_CASES, HOSTILE_LIMITS, hostileCall } from "../../fixtures/hostile/index.js";
import { HEALTHY, hookCall } from "../bundle-fixtures.js";
import { tenantOn } from "./helpers/processes.js";

/**
 * The whole hostile corpus through the process executor, fatal cases included: for each case the host
 * stays alive and responsive, the outcome has the expected code, the attacking tenant's next healthy call
 * succeeds, and another tenant (on the other worker) has every call made during the attack succeed.
 */

const limits = Limits.parse(HOSTILE_LIMITS);
let executor: ProcessExecutor;
const events: SupervisorEvent[] = [];
let bystander: TenantId;

beforeAll(async () => {
  executor = await startProcessExecutor({
    workers: 2,
    limits: HOSTILE_LIMITS,
    killGraceMs: 500,
    onEvent: (e) => events.push(e),
  });
  bystander = tenantOn((id) => executor.shardOf(id), 1, "bystander");
});
afterAll(() => executor.close());

const codeOf = (outcome: HookOutcome): string => (outcome.type === "failed" ? outcome.failure.code : "ok");
const healthy = async (tenantId: TenantId) =>
  codeOf((await invokeHook(executor, ...hookCall(tenantId, HEALTHY), limits)).outcome);

describe("hostile corpus through the process executor", () => {
  it.each(HOSTILE_CASES.map((c, i) => [c.name, c.expect, c, i] as const))(
    "%s ends as %s; the host, the tenant's next call and another tenant's calls are fine",
    async (_name, _expect, c, i) => {
      const attacker = tenantOn((id) => executor.shardOf(id), 0, `victim-${i}`);
      let attacking = true;
      const bystanderCodes: string[] = [];
      const alongside = (async () => {
        do bystanderCodes.push(await healthy(bystander));
        while (attacking);
      })();
      const started = performance.now();
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 5);
      const attack = await invokeHook(executor, ...hostileCall(c, attacker), limits).finally(() => {
        attacking = false;
      });
      clearInterval(ticker);
      await alongside;

      expect(codeOf(attack.outcome), JSON.stringify(attack.outcome).slice(0, 300)).toBe(c.expect);
      if (c.reason !== undefined) {
        expect(attack.outcome.type === "decided" && attack.outcome.result).toMatchObject({ reason: c.reason });
      }
      // The host's event loop kept turning during the attack (timers fired), and it still answers now.
      if (performance.now() - started > 100) expect(ticks).toBeGreaterThan(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect(bystanderCodes.length).toBeGreaterThan(0);
      expect(bystanderCodes.filter((code) => code !== "ok")).toEqual([]);
      expect(await healthy(attacker)).toBe("ok");
    },
  );

  it("killed or lost a worker only for fatal cases, and never the bystander's", () => {
    const fatal = HOSTILE_CASES.filter((c) => c.fatal).length;
    const exits = events.filter((e) => e.type === "worker_exited");
    expect(exits.length).toBe(fatal);
    expect(exits.every((e) => e.type === "worker_exited" && e.slot === 0)).toBe(true);
  });
});
