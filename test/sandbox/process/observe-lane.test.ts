import { describe, expect, it } from "vitest";
import { MAX_QUEUED_OBSERVE_CALLS, ObserveLane } from "../../../sandbox/supervisor/observe-lane.js";
import type { SandboxResult } from "../../../src/protocol/index.js";

const REPLY: SandboxResult = { type: "replied", reply: "{}", cpuMs: 0, runMs: 0 };

/** A call the test settles by hand, and the order in which calls were sent. */
function controlled(sent: string[], name: string) {
  let settle = (): void => {};
  const promise = new Promise<SandboxResult>((resolve) => {
    settle = () => resolve(REPLY);
  });
  return {
    send: () => {
      sent.push(name);
      return promise;
    },
    settle,
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("ObserveLane", () => {
  it("holds observe calls while a decision call is in flight, then sends one at a time", async () => {
    const lane = new ObserveLane(0);
    const sent: string[] = [];
    const decision = controlled(sent, "decision");
    const o1 = controlled(sent, "o1");
    const o2 = controlled(sent, "o2");
    void lane.decision(decision.send());
    const first = lane.observe(o1.send, undefined);
    void lane.observe(o2.send, undefined);
    await tick();
    expect(sent).toEqual(["decision"]);
    decision.settle();
    await tick();
    expect(sent).toEqual(["decision", "o1"]);
    o1.settle();
    await first;
    await tick();
    expect(sent).toEqual(["decision", "o1", "o2"]);
  });

  it("lets a decision call go out while an observe call runs, and holds the next observe call behind it", async () => {
    const lane = new ObserveLane(0);
    const sent: string[] = [];
    const o1 = controlled(sent, "o1");
    const o2 = controlled(sent, "o2");
    const decision = controlled(sent, "decision");
    void lane.observe(o1.send, undefined);
    void lane.observe(o2.send, undefined);
    void lane.decision(decision.send());
    expect(sent).toEqual(["o1", "decision"]);
    o1.settle();
    await tick();
    expect(sent).toEqual(["o1", "decision"]);
    decision.settle();
    await tick();
    expect(sent).toEqual(["o1", "decision", "o2"]);
  });

  it("drops a queued call on abort and rejects the rest on close", async () => {
    const lane = new ObserveLane(0);
    const sent: string[] = [];
    const decision = controlled(sent, "decision");
    void lane.decision(decision.send());
    const controller = new AbortController();
    const aborted = lane.observe(controlled(sent, "o1").send, controller.signal);
    const closed = lane.observe(controlled(sent, "o2").send, undefined);
    controller.abort(new Error("cancelled"));
    await expect(aborted).rejects.toThrow("cancelled");
    lane.close(new Error("closed"));
    await expect(closed).rejects.toThrow("closed");
    decision.settle();
    await tick();
    expect(sent).toEqual(["decision"]);
  });

  it("waits for the worker to be free of decision calls for its idle time before an observe call", async () => {
    const lane = new ObserveLane(30);
    const sent: string[] = [];
    const decision = controlled(sent, "decision");
    void lane.decision(decision.send());
    void lane.observe(controlled(sent, "o1").send, undefined);
    decision.settle();
    await tick();
    expect(sent).toEqual(["decision"]);
    // A decision arriving within the idle time goes first and restarts the wait.
    const next = controlled(sent, "next");
    void lane.decision(next.send());
    next.settle();
    await tick();
    expect(sent).toEqual(["decision", "next"]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sent).toEqual(["decision", "next", "o1"]);
  });

  it("holds an observe call queued just after a decision ended for the idle time too", async () => {
    const lane = new ObserveLane(30);
    const sent: string[] = [];
    const decision = controlled(sent, "decision");
    void lane.decision(decision.send());
    decision.settle();
    await tick();
    void lane.observe(controlled(sent, "o1").send, undefined);
    expect(sent).toEqual(["decision"]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sent).toEqual(["decision", "o1"]);
  });

  it("keeps one abort listener per signal however many of its calls are queued, and rejects them all on abort", async () => {
    const lane = new ObserveLane(0);
    const sent: string[] = [];
    const decision = controlled(sent, "decision");
    void lane.decision(decision.send());
    const run = new AbortController();
    const other = new AbortController();
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    let added = 0;
    const addEventListener = run.signal.addEventListener.bind(run.signal);
    run.signal.addEventListener = (...args: Parameters<AbortSignal["addEventListener"]>) => {
      added++;
      addEventListener(...args);
    };
    const queued = Array.from({ length: 40 }, (_, i) => lane.observe(controlled(sent, `o${i}`).send, run.signal));
    const kept = lane.observe(controlled(sent, "kept").send, other.signal);
    const settled = Promise.allSettled(queued);
    run.abort(new Error("run over"));
    const results = await settled;
    await tick();
    process.off("warning", onWarning);
    expect(added).toBe(1);
    expect(results.every((r) => r.status === "rejected" && (r.reason as Error).message === "run over")).toBe(true);
    expect(warnings).not.toContain("MaxListenersExceededWarning");
    decision.settle();
    await tick();
    expect(sent).toEqual(["decision", "kept"]);
    void kept;
  });

  it("answers unavailable past its queue cap instead of growing", async () => {
    const lane = new ObserveLane(0);
    const sent: string[] = [];
    void lane.decision(controlled(sent, "decision").send());
    const queued = Array.from({ length: MAX_QUEUED_OBSERVE_CALLS }, (_, i) =>
      lane.observe(controlled(sent, `o${i}`).send, undefined).catch(() => "rejected"),
    );
    const over = await lane.observe(controlled(sent, "over").send, undefined);
    expect(over).toMatchObject({ type: "failed", failure: { code: "unavailable" } });
    lane.close(new Error("closed"));
    expect(new Set(await Promise.all(queued))).toEqual(new Set(["rejected"]));
  });
});
