import { describe, expect, it } from "vitest";
import type { DispatchEvent } from "../../src/dispatch/index.js";
import { bundleKey, LocalQuarantineBook } from "../../src/dispatch/quarantine.js";
import type { SandboxResult } from "../../src/protocol/index.js";
import { HASH, returned, sandboxFailed, TENANT, toolCallEvent } from "./helpers.js";
import { setup } from "./setup.js";

const KEY = bundleKey(TENANT, HASH);
const settings = { failures: 3, windowMs: 60_000, cooldownMs: 30_000, maxCooldownMs: 100_000, forgetAfterMs: 600_000 };

describe("quarantine through the dispatcher", () => {
  it("quarantines after K timeouts, skips the sandbox meanwhile and exits after the cooldown", async () => {
    const { run, executor, clock, events, dispatcher } = setup({
      points: ["tool.call"],
      respond: () => sandboxFailed("timeout", 1),
      options: { quarantine: { failures: 3, windowMs: 60_000, cooldownMs: 30_000 } },
    });
    for (let i = 0; i < 3; i++) await run.dispatch("tool.call", toolCallEvent());
    expect(executor.seen).toHaveLength(3);
    expect(dispatcher.quarantinedUntil(TENANT, HASH)).toBe(clock.now + 30_000);
    expect(events.find((e) => e.type === "quarantine.entered")).toEqual({
      type: "quarantine.entered",
      at: clock.now,
      tenantId: TENANT,
      bundleHash: HASH,
      until: clock.now + 30_000,
      cooldownMs: 30_000,
      strike: 1,
      code: "timeout",
      origin: "host",
    });

    const during = await run.dispatch("tool.call", toolCallEvent());
    expect(executor.seen).toHaveLength(3);
    expect(during.decision).toMatchObject({ type: "block", reason: "quarantined" });
    expect(during.records[0]?.outcome).toMatchObject({ type: "failed", failure: { code: "quarantined" } });

    clock.advance(30_000);
    executor.respondWith(() => returned(undefined));
    const after = await run.dispatch("tool.call", toolCallEvent());
    expect(after.decision.type).toBe("execute");
    expect(executor.seen).toHaveLength(4);
    expect(events.filter((e) => e.type === "quarantine.exited")).toEqual([
      { type: "quarantine.exited", at: clock.now, tenantId: TENANT, bundleHash: HASH },
    ]);
  });

  it("does not count timeouts stopped by the wall-clock backstop with little CPU time used", async () => {
    const { run, executor, dispatcher } = setup({
      points: ["tool.call"],
      respond: () => sandboxFailed("timeout", 50, 3),
      options: { quarantine: { failures: 2 } },
    });
    for (let i = 0; i < 4; i++) await run.dispatch("tool.call", toolCallEvent());
    expect(executor.seen).toHaveLength(4);
    expect(dispatcher.quarantinedUntil(TENANT, HASH)).toBeUndefined();
    executor.respondWith(() => sandboxFailed("timeout", 1, 50));
    for (let i = 0; i < 2; i++) await run.dispatch("tool.call", toolCallEvent());
    expect(dispatcher.quarantinedUntil(TENANT, HASH)).toBeDefined();
  });

  it("ends quarantined calls as the no-op under open", async () => {
    const { run } = setup({
      points: ["turn.end"],
      respond: () => sandboxFailed("memory_limit", 1),
      options: { quarantine: { failures: 1 } },
    });
    const event = { turn: 0, message: { role: "assistant" as const, content: "" }, toolResults: [] };
    await run.dispatch("turn.end", event);
    const { decision, records } = await run.dispatch("turn.end", event);
    expect(decision).toEqual({ type: "default" });
    expect(records[0]?.outcome).toMatchObject({ type: "failed", failure: { code: "quarantined" } });
  });

  it("does not count bystander failures (another call crashed the worker) but counts the culprit's", async () => {
    const bystander = (): SandboxResult => ({
      type: "failed",
      failure: { code: "sandbox_crashed", message: "worker died running another call", bystander: true },
      cpuMs: 0,
      runMs: 0,
    });
    const { run, dispatcher, executor, events } = setup({
      points: ["tool.call"],
      respond: bystander,
      options: { quarantine: { failures: 2 } },
    });
    for (let i = 0; i < 5; i++) {
      const { decision, records } = await run.dispatch("tool.call", toolCallEvent());
      expect(decision).toMatchObject({ type: "block", reason: "sandbox_crashed" });
      expect(records[0]?.outcome).toMatchObject({ type: "failed", failure: { bystander: true } });
    }
    expect(dispatcher.quarantinedUntil(TENANT, HASH)).toBeUndefined();
    expect(events[0]).toMatchObject({
      type: "hook.called",
      record: { outcome: { failure: { code: "sandbox_crashed", bystander: true } } },
    });
    executor.respondWith(() => sandboxFailed("sandbox_crashed", 3));
    await run.dispatch("tool.call", toolCallEvent());
    await run.dispatch("tool.call", toolCallEvent());
    expect(dispatcher.quarantinedUntil(TENANT, HASH)).toBeDefined();
    expect(executor.seen).toHaveLength(7);
  });

  it("does not count threw, invalid_result or budget denials", async () => {
    const { run, dispatcher } = setup({
      points: ["tool.call"],
      respond: () => returned({ type: "nonsense" }),
      options: { quarantine: { failures: 1 } },
    });
    await run.dispatch("tool.call", toolCallEvent());
    expect(dispatcher.quarantinedUntil(TENANT, HASH)).toBeUndefined();
  });
});

describe("LocalQuarantineBook", () => {
  it("only counts failures inside the window", () => {
    const book = new LocalQuarantineBook(settings, undefined);
    book.strike(KEY, "timeout", 0);
    book.strike(KEY, "pending", 30_000);
    expect(book.strike(KEY, "sandbox_crashed", 60_000)).toBeUndefined();
    expect(book.strike(KEY, "timeout", 60_001)).toEqual({ until: 90_001, strike: 1 });
  });

  it("counts a weighted strike as that many failures, and only quarantine kinds at all", () => {
    const book = new LocalQuarantineBook(settings, undefined);
    expect(book.strike(KEY, "threw", 0, 10)).toBeUndefined();
    expect(book.strike(KEY, "timeout", 0, 2)).toBeUndefined();
    expect(book.strike(KEY, "timeout", 1, 1)).toEqual({ until: 30_001, strike: 1 });
    const other = bundleKey(TENANT, `sha256-${"c".repeat(64)}` as typeof HASH);
    expect(book.strike(other, "timeout", 0, 18)).toEqual({ until: 30_000, strike: 1 });
  });

  it("doubles the cooldown on each repeat up to the maximum", () => {
    const events: DispatchEvent[] = [];
    const book = new LocalQuarantineBook(settings, (e) => events.push(e));
    let now = 0;
    const cooldowns: number[] = [];
    for (let round = 0; round < 4; round++) {
      let entered: { until: number } | undefined;
      for (let i = 0; i < 3; i++) entered = book.strike(KEY, "timeout", now);
      if (entered === undefined) throw new Error("expected a quarantine");
      cooldowns.push(entered.until - now);
      expect(book.status(KEY, entered.until - 1)).toBeDefined();
      now = entered.until;
      expect(book.status(KEY, now)).toBeUndefined();
    }
    expect(cooldowns).toEqual([30_000, 60_000, 100_000, 100_000]);
    expect(events.map((e) => e.type)).toEqual([
      "quarantine.entered",
      "quarantine.exited",
      "quarantine.entered",
      "quarantine.exited",
      "quarantine.entered",
      "quarantine.exited",
      "quarantine.entered",
      "quarantine.exited",
    ]);
  });

  it("starts over at the base cooldown after a quiet period", () => {
    const book = new LocalQuarantineBook(settings, undefined);
    for (let i = 0; i < 3; i++) book.strike(KEY, "timeout", 0);
    book.status(KEY, 30_000);
    const later = 30_000 + 600_000;
    for (let i = 0; i < 2; i++) book.strike(KEY, "timeout", later);
    expect(book.strike(KEY, "timeout", later)).toEqual({ until: later + 30_000, strike: 1 });
  });

  it("keeps bundles and tenants apart", () => {
    const book = new LocalQuarantineBook({ ...settings, failures: 1 }, undefined);
    book.strike(KEY, "timeout", 0);
    const other = `sha256-${"b".repeat(64)}` as typeof HASH;
    expect(book.status(bundleKey(TENANT, other), 1)).toBeUndefined();
    expect(book.status(KEY, 1)).toBeDefined();
  });
});
