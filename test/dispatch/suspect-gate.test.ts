import { describe, expect, it } from "vitest";
import { bundleKey } from "../../src/dispatch/quarantine.js";
import { endOf, SuspectGate, type Turn } from "../../src/dispatch/suspect-gate.js";
import { BundleHash, type HookOutcome, TenantId } from "../../src/protocol/index.js";

const KEY = bundleKey(TenantId.parse("mallory"), BundleHash.parse(`sha256-${"a".repeat(64)}`));
const OTHER = bundleKey(TenantId.parse("acme"), BundleHash.parse(`sha256-${"b".repeat(64)}`));

/** Resolves on the next macrotask: long enough for any settled promise's callbacks to have run. */
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Tracks whether a pending admission has started. */
function track(admission: Promise<Turn> | undefined): { turn: Turn | undefined; rejected: unknown } {
  const seen: { turn: Turn | undefined; rejected: unknown } = { turn: undefined, rejected: undefined };
  admission?.then(
    (turn) => {
      seen.turn = turn;
    },
    (error: unknown) => {
      seen.rejected = error;
    },
  );
  return seen;
}

describe("SuspectGate", () => {
  it("runs a bundle's calls one at a time until one ends healthy, then lets every call through at once", async () => {
    const gate = new SuspectGate(() => Promise.resolve());
    const first = track(gate.admit(KEY, undefined));
    const second = track(gate.admit(KEY, undefined));
    const third = track(gate.admit(KEY, undefined));
    const other = track(gate.admit(OTHER, undefined));
    await tick();
    expect(first.turn).toBeDefined();
    expect(other.turn).toBeDefined();
    expect(second.turn).toBeUndefined();
    first.turn?.("none");
    await tick();
    expect(second.turn).toBeDefined();
    expect(third.turn).toBeUndefined();
    second.turn?.("healthy");
    await tick();
    expect(third.turn).toBeDefined();
    expect(gate.admit(KEY, undefined)).toBeUndefined();
  });

  it("starts the next call after a strike only once the book counted it", async () => {
    let count: () => void = () => undefined;
    const gate = new SuspectGate(() => new Promise<void>((resolve) => (count = resolve)));
    const first = track(gate.admit(KEY, undefined));
    const second = track(gate.admit(KEY, undefined));
    await tick();
    first.turn?.("struck");
    await tick();
    expect(second.turn).toBeUndefined();
    count();
    await tick();
    expect(second.turn).toBeDefined();
  });

  it("makes a trusted bundle suspect again on a strike", async () => {
    const gate = new SuspectGate(() => Promise.resolve());
    const first = track(gate.admit(KEY, undefined));
    await tick();
    first.turn?.("healthy");
    expect(gate.admit(KEY, undefined)).toBeUndefined();
    gate.distrust(KEY);
    const next = track(gate.admit(KEY, undefined));
    const after = track(gate.admit(KEY, undefined));
    await tick();
    expect(next.turn).toBeDefined();
    expect(after.turn).toBeUndefined();
  });

  it("rejects a waiting call whose signal aborted when its turn comes, and starts the next", async () => {
    const gate = new SuspectGate(() => Promise.resolve());
    const first = track(gate.admit(KEY, undefined));
    const controller = new AbortController();
    const aborted = track(gate.admit(KEY, controller.signal));
    const last = track(gate.admit(KEY, undefined));
    await tick();
    controller.abort(new Error("run cancelled"));
    first.turn?.("none");
    await tick();
    expect(aborted.rejected).toBeInstanceOf(Error);
    expect(aborted.turn).toBeUndefined();
    expect(last.turn).toBeDefined();
    await expect(gate.admit(KEY, controller.signal)).rejects.toThrow("run cancelled");
  });

  it("ends a turn once however often it is ended", async () => {
    const gate = new SuspectGate(() => Promise.resolve());
    const first = track(gate.admit(KEY, undefined));
    const second = track(gate.admit(KEY, undefined));
    const third = track(gate.admit(KEY, undefined));
    await tick();
    first.turn?.("none");
    first.turn?.("none");
    await tick();
    expect(second.turn).toBeDefined();
    expect(third.turn).toBeUndefined();
  });
});

describe("endOf", () => {
  const failed = (code: "timeout" | "threw", bystander?: true): HookOutcome => ({
    type: "failed",
    failure: { code, message: "x", ...(bystander === undefined ? {} : { bystander }) },
    logs: [],
  });

  it("calls a strike struck, a decision or a hook's own error healthy, a starved timeout or a bystander's failure nothing", () => {
    expect(endOf(failed("timeout"), "timeout")).toBe("struck");
    expect(endOf({ type: "decided", result: null, state: undefined, logs: [] }, undefined)).toBe("healthy");
    expect(endOf(failed("threw"), undefined)).toBe("healthy");
    expect(endOf(failed("timeout"), undefined)).toBe("none");
    expect(endOf(failed("threw", true), undefined)).toBe("none");
  });
});
