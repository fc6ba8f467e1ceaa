import { describe, expect, it } from "vitest";
import { createDispatcher, decidingBundle, ROLLOUT_BUCKETS, rolloutBucket } from "../../src/dispatch/index.js";
import { type ActiveBundle, RunId, TenantId } from "../../src/protocol/index.js";
import { bundleOf, FakeExecutor, returned, TENANT, toolCallEvent } from "./helpers.js";

const V1 = `sha256-${"1".repeat(64)}`;
const V2 = `sha256-${"2".repeat(64)}`;

function served(percent: number): ActiveBundle {
  return { ...bundleOf(["tool.call"], { version: 1, hash: V1 }), rollout: { bundle: candidate(), percent } };
}
const candidate = () => bundleOf(["tool.call"], { version: 2, hash: V2 });
const runIds = Array.from({ length: 10_000 }, (_, i) => RunId.parse(`run_${i}`));

describe("percentage rollout", () => {
  it("gives the same run id the same bucket every time, in 10,000 buckets", () => {
    const buckets = runIds.map((id) => rolloutBucket(TENANT, id));
    expect(runIds.map((id) => rolloutBucket(TENANT, id))).toEqual(buckets);
    expect(Math.min(...buckets)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...buckets)).toBeLessThan(ROLLOUT_BUCKETS);
    // SHA-256 of "acme\nrun_1": the same bucket on every host, process and Node version.
    expect(rolloutBucket(TenantId.parse("acme"), RunId.parse("run_1"))).toBe(4662);
    expect(rolloutBucket(TenantId.parse("acme"), RunId.parse("run_2"))).toBe(3048);
  });

  it.each([1, 10, 25, 50, 90, 99.5])(
    "sends within a few points of %s %% of 10,000 run ids to the candidate",
    (percent) => {
      const bundle = served(percent);
      const share = runIds.filter((id) => decidingBundle(bundle, id).version === 2).length / runIds.length;
      expect(Math.abs(share * 100 - percent)).toBeLessThan(2);
    },
  );

  it("keeps a run on the candidate when the share grows, and decides by run id alone", () => {
    const at10 = new Set(runIds.filter((id) => decidingBundle(served(10), id).version === 2));
    const at50 = new Set(runIds.filter((id) => decidingBundle(served(50), id).version === 2));
    expect([...at10].every((id) => at50.has(id))).toBe(true);
    const again = new Set(runIds.filter((id) => decidingBundle(served(10), id).version === 2));
    expect(again).toEqual(at10);
  });

  it("serves the active bundle when there is no rollout", () => {
    const active = bundleOf(["tool.call"], { version: 1, hash: V1 });
    expect(decidingBundle(active, RunId.parse("run_1"))).toBe(active);
  });

  it("runs each run on its version and says which decided, on the run and on every record", async () => {
    const executor = new FakeExecutor(({ bundle }) =>
      returned(bundle.hash === V2 ? { type: "block", reason: "v2 says no" } : undefined),
    );
    const dispatcher = createDispatcher({ executor });
    const bundle = served(50);
    const onCandidate = runIds.find((id) => decidingBundle(bundle, id).version === 2) as RunId;
    const onActive = runIds.find((id) => decidingBundle(bundle, id).version === 1) as RunId;
    const a = dispatcher.openRun({ tenantId: TENANT, runId: onCandidate, bundle });
    const b = dispatcher.openRun({ tenantId: TENANT, runId: onActive, bundle });
    expect(a.bundle).toEqual({ version: 2, hash: V2 });
    expect(b.bundle).toEqual({ version: 1, hash: V1 });
    const fromA = await a.dispatch("tool.call", toolCallEvent());
    const fromB = await b.dispatch("tool.call", toolCallEvent());
    expect(fromA.decision.type).toBe("block");
    expect(fromA.records[0]).toMatchObject({ hookId: "tenant:acme@v2", bundle: { version: 2, hash: V2 } });
    expect(fromB.decision.type).toBe("execute");
    expect(fromB.records[0]).toMatchObject({ hookId: "tenant:acme@v1", bundle: { version: 1, hash: V1 } });
    expect(executor.seen.map((s) => (s.ctx.bundle as { version: number }).version)).toEqual([2, 1]);
  });
});
