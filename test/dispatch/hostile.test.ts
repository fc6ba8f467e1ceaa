import { describe, expect, it } from "vitest";
import type { SandboxResult } from "../../src/protocol/index.js";
import { returned, sandboxFailed, toolCallEvent } from "./helpers.js";
import { setup } from "./setup.js";

const raw = (reply: string): SandboxResult => ({ type: "replied", reply, cpuMs: 0, runMs: 1 });

describe("hostile guest replies", () => {
  it("cannot pollute prototypes through __proto__ keys in args or state", async () => {
    const { run, executor } = setup({
      points: ["tool.call"],
      policy: { "tool.call": "open" },
      respond: () =>
        raw(
          '{"kind":"returned","result":{"type":"rewrite","args":{"__proto__":{"polluted":true},"a":1}},' +
            '"state":{"__proto__":{"admin":true}},"logs":[]}',
        ),
    });
    const { decision } = await run.dispatch("tool.call", toolCallEvent());
    await run.dispatch("tool.call", toolCallEvent());
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(decision.type === "execute" && Object.getPrototypeOf(decision.args)).toBe(Object.prototype);
    expect(decision.type === "execute" && (decision.args as Record<string, unknown>).polluted).toBeUndefined();
    expect(executor.seen[1]?.ctx.state).toEqual({});
  });

  it("cannot break out of ctx through its state", async () => {
    const sneaky = '"},"tenantId":"evil","x":{"';
    const { run, executor } = setup({
      points: ["tool.call"],
      respond: () => returned(undefined, { state: { [sneaky]: sneaky } }),
    });
    await run.dispatch("tool.call", toolCallEvent());
    await run.dispatch("tool.call", toolCallEvent());
    expect(executor.seen[1]?.ctx.tenantId).toBe("acme");
    expect(executor.seen[1]?.ctx.state).toEqual({ [sneaky]: sneaky });
  });

  it("cannot forge sandbox failure codes to look like a timeout or a quarantine", async () => {
    for (const code of ["timeout", "quarantined", "memory_limit"]) {
      const { run, dispatcher } = setup({
        points: ["tool.call"],
        respond: () => raw(JSON.stringify({ kind: "failed", code, message: "forged", logs: [] })),
        options: { quarantine: { failures: 1 } },
      });
      const { records } = await run.dispatch("tool.call", toolCallEvent());
      expect(records[0]?.outcome).toMatchObject({ type: "failed", failure: { code: "invalid_result" } });
      expect(dispatcher.quarantinedUntil(run.tenantId, `sha256-${"a".repeat(64)}` as never)).toBeUndefined();
    }
  });

  it("turns malformed envelopes, wrong-point results and extra keys into invalid_result", async () => {
    const replies = [
      '{"kind":"returned","result":{"type":"block","reason":"x"},"logs":[],"extra":1}',
      '{"kind":"returned","result":{"type":"block","reason":"x"},"state":[],"logs":[]}',
      '{"kind":"returned","result":{"type":"patch","content":"x"},"logs":[]}',
      '{"kind":"returned","result":{"type":"block","reason":"x","reson":"typo"},"logs":[]}',
      '{"kind":"returned","result":{"type":"block","reason":"x"},"logs":[1]}',
      `${"[".repeat(20_000)}${"]".repeat(20_000)}`,
      "",
    ];
    for (const reply of replies) {
      const { run } = setup({ points: ["tool.call"], respond: () => raw(reply) });
      const { decision, records } = await run.dispatch("tool.call", toolCallEvent());
      expect(records[0]?.outcome).toMatchObject({ type: "failed", failure: { code: "invalid_result" } });
      expect(decision).toMatchObject({ type: "block", reason: "invalid_result" });
    }
  });

  it("keeps other tenants' runs going while one tenant's bundle is quarantined", async () => {
    const { dispatcher, run, executor } = setup({
      points: ["tool.call"],
      respond: (seen) => (seen.ctx.tenantId === "acme" ? sandboxFailed("timeout", 1) : returned(undefined)),
      options: { quarantine: { failures: 2 } },
    });
    await run.dispatch("tool.call", toolCallEvent());
    await run.dispatch("tool.call", toolCallEvent());
    const other = {
      tenantId: "globex" as typeof run.tenantId,
      version: 1,
      code: "",
      config: null,
      manifest: {
        hash: `sha256-${"b".repeat(64)}` as never,
        bytes: 1,
        hookPoints: ["tool.call" as const],
        sdkVersion: "1",
        entry: "x",
      },
    };
    const otherRun = dispatcher.openRun({ tenantId: other.tenantId, runId: run.runId, bundle: other });
    expect((await run.dispatch("tool.call", toolCallEvent())).decision).toMatchObject({
      type: "block",
      reason: "quarantined",
    });
    expect((await otherRun.dispatch("tool.call", toolCallEvent())).decision.type).toBe("execute");
    expect(executor.seen.map((s) => s.ctx.tenantId)).toEqual(["acme", "acme", "globex"]);
  });
});

describe("host-side faults", () => {
  it("turns an executor that refuses the call into unavailable under the policy", async () => {
    const { run, executor } = setup({ points: ["tool.call"] });
    executor.respondWith(() => Promise.reject(new Error("This hook executor was closed")));
    const { decision, records } = await run.dispatch("tool.call", toolCallEvent());
    expect(decision).toMatchObject({ type: "block", reason: "unavailable" });
    expect(records[0]?.outcome).toMatchObject({
      failure: { code: "unavailable", message: expect.stringContaining("was closed") },
    });
  });

  it("keeps deciding when emit throws", async () => {
    const { run } = setup({
      points: ["tool.call"],
      respond: () => returned({ type: "block", reason: "no" }),
      options: {
        emit: () => {
          throw new Error("log sink down");
        },
      },
    });
    expect((await run.dispatch("tool.call", toolCallEvent())).decision).toMatchObject({ type: "block", reason: "no" });
  });
});
