import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { deployHook, type GateReason, runDeployGate } from "../../src/gate/index.js";
import { type HookExecutor, TenantId } from "../../src/protocol/index.js";
import { MemoryBundleStore } from "../../src/store/index.js";
import { GOOD_FIXTURES, GOOD_INDEX, toolCallFixture, writeHook } from "./hook-modules.js";

const tenantId = TenantId.parse("acme");
const fuzz = { runs: 60, timeMs: 1_500, seed: 7 };
let root: string;
let executor: HookExecutor;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "isohook-gate-"));
  executor = await createHookExecutor({ workers: 1, spareWorker: false });
});
afterAll(async () => {
  await executor?.close();
  rmSync(root, { recursive: true, force: true });
});

async function gate(name: string, index: string, fixtures?: string | null, extra: object = {}) {
  const entry = writeHook(root, name, index, fixtures);
  return runDeployGate({ entry, executor, tenantId, fuzz, ...extra });
}

const codes = (reasons: readonly GateReason[]) => reasons.map((r) => r.code);

describe("runDeployGate", () => {
  it("passes a bundle whose fixtures pass and whose fuzz stays valid, with the bundle to store", async () => {
    const result = await gate("good", GOOD_INDEX);
    expect(result.report.reasons).toEqual([]);
    expect(result.type).toBe("passed");
    if (result.type !== "passed") return;
    expect(result.bundle.manifest.hookPoints).toEqual(["tool.call"]);
    expect(result.report.fixtures).toMatchObject({ total: 2, passed: 2, failed: 0 });
    // Kept for fuzzing the stored version later (isohook fuzz --tenant).
    expect(result.report.fixtures?.events?.map((e) => [e.line, e.point])).toEqual([
      [1, "tool.call"],
      [2, "tool.call"],
    ]);
    expect(result.report.fuzz).toEqual([expect.objectContaining({ point: "tool.call", passed: true, seed: 7 })]);
    expect(result.report.fuzz[0]?.runs).toBeGreaterThan(0);
  });

  it("passes the example hooks", async () => {
    for (const entry of ["hooks/block-destructive-shell", "hooks/redact-secrets"]) {
      const result = await runDeployGate({ entry, executor, tenantId, fuzz, cwd: process.cwd() });
      expect([entry, result.report.reasons]).toEqual([entry, []]);
    }
  });

  it("rejects a module that does not compile, with file and line", async () => {
    const result = await gate("syntax", "export default { toolCall(event) { return {{ } };\n");
    expect(result.type).toBe("rejected");
    expect(codes(result.report.reasons)).toEqual(["bundle_failed"]);
    const reason = result.report.reasons[0];
    expect(reason?.code === "bundle_failed" && reason.problems[0]?.line).toBe(1);
  });

  it("rejects a module that imports a Node built-in", async () => {
    const result = await gate(
      "node",
      `import { readFileSync } from "node:fs";\nexport default { toolCall() { readFileSync("/etc/passwd"); } };\n`,
    );
    expect(codes(result.report.reasons)).toEqual(["bundle_failed"]);
    expect(result.report.reasons[0]?.message).toContain("node:fs");
  });

  it("rejects unknown exports and still checks the known points", async () => {
    const index = `export default {
      toolCal() { return { type: "block", reason: "typo" }; },
      toolCall(event) { return event.call.name === "shell" && event.call.args.command === "ls" ? undefined : undefined; },
    };`;
    const result = await gate("unknown", index, toolCallFixture("shell", { command: "rm -rf /" }, { type: "block" }));
    expect(codes(result.report.reasons)).toEqual(["unknown_exports", "fixture_failed"]);
    expect(result.report.reasons[0]?.message).toContain("toolCall");
    expect(result.report.hookPoints).toEqual(["tool.call"]);
    expect(result.report.fuzz.map((f) => f.point)).toEqual(["tool.call"]);
  });

  it("rejects a module that throws while loading", async () => {
    const result = await gate("throws-on-load", `throw new Error("boom");\nexport default { toolCall() {} };\n`);
    expect(codes(result.report.reasons)).toEqual(["describe_failed"]);
  });

  it("rejects a module without handlers", async () => {
    const result = await gate("empty", "export default {};\n");
    expect(codes(result.report.reasons)).toContain("no_hook_points");
  });

  it("rejects a bundle over the size cap and still runs the other checks", async () => {
    const failing = toolCallFixture("shell", { command: "ls" }, { type: "block" });
    const unpadded = await gate("small", GOOD_INDEX, failing);
    const cap = (unpadded.report.bytes ?? 0) + 256;
    const fits = await gate("fits", GOOD_INDEX, failing, { limits: { maxBundleBytes: cap } });
    const padIndex = `const PAD = ${JSON.stringify("x".repeat(2000))};
${GOOD_INDEX.replace('event.call.name === "shell"', '(event.call.name === "shell" || event.call.name === PAD)')}`;
    const padded = await gate("big-padded", padIndex, failing, { limits: { maxBundleBytes: cap } });
    expect(codes(fits.report.reasons)).toEqual(["fixture_failed"]);
    expect(codes(padded.report.reasons)).toEqual(["too_large", "fixture_failed"]);
    expect(padded.report.fuzz.map((f) => f.point)).toEqual(["tool.call"]);
    const tooLarge = padded.report.reasons[0];
    expect(tooLarge?.code === "too_large" && tooLarge.maxBytes).toBe(cap);
  });

  it("rejects a module without fixtures.jsonl, or with an empty or malformed one", async () => {
    expect(codes((await gate("no-fixtures", GOOD_INDEX, null)).report.reasons)).toEqual(["no_fixtures"]);
    expect(codes((await gate("empty-fixtures", GOOD_INDEX, "")).report.reasons)).toEqual(["no_fixtures"]);
    const malformed = await gate("bad-fixtures", GOOD_INDEX, `${GOOD_FIXTURES}\n{"point": "tool.call", "event": `);
    expect(codes(malformed.report.reasons)).toEqual(["invalid_fixtures"]);
    expect(malformed.report.reasons[0]?.message).toMatch(/fixtures\.jsonl/);
  });

  it("rejects every failing fixture, naming its line", async () => {
    const fixtures = [
      toolCallFixture("shell", { command: "rm -rf /" }, { type: "block", reason: "something else" }),
      toolCallFixture("shell", { command: "ls" }, { noop: true }),
      toolCallFixture("shell", { command: "ls" }, { type: "block" }),
    ].join("\n");
    const result = await gate("failing-fixtures", GOOD_INDEX, fixtures);
    expect(codes(result.report.reasons)).toEqual(["fixture_failed", "fixture_failed"]);
    expect(result.report.reasons.map((r) => (r.code === "fixture_failed" ? r.line : 0))).toEqual([1, 3]);
    expect(result.report.fixtures).toMatchObject({ total: 3, passed: 1, failed: 2 });
  });

  it.each([
    ["threw", "toolCall(event) { if (event.call.name !== 'shell') return event.call.args.command.length; }"],
    ["invalid_result", "toolCall(event) { if (event.call.name !== 'shell') return { type: 'block' }; }"],
    ["timeout", "toolCall(event) { if (event.call.name !== 'shell') for (;;) {} }"],
    ["pending", "async toolCall(event) { if (event.call.name !== 'shell') await new Promise(() => {}); }"],
  ])("rejects a hook whose fuzz ends in %s and reports the event", async (failure, handler) => {
    const fixtures = toolCallFixture("shell", { command: "ls" }, { noop: true });
    const result = await gate(`fuzz-${failure}`, `export default { ${handler} };\n`, fixtures);
    expect(codes(result.report.reasons)).toEqual(["fuzz_failed"]);
    const reason = result.report.reasons[0];
    if (reason?.code !== "fuzz_failed") throw new Error("expected fuzz_failed");
    expect(reason.failure).toBe(failure);
    expect(reason.point).toBe("tool.call");
    expect(reason.event).toMatchObject({ call: { name: expect.not.stringMatching(/^shell$/) } });
    expect(result.report.fuzz[0]?.passed).toBe(false);
  });

  it("fuzzes with the tenant config the version will run with", async () => {
    const index =
      "export default { toolCall(event, ctx) { if (ctx.config.mode !== 'strict') throw new Error('no config'); } };\n";
    const fixtures = toolCallFixture("shell", { command: "ls" }, {});
    const without = await gate("config-needed", index, fixtures);
    const withConfig = await gate("config-given", index, fixtures, { config: { mode: "strict" } });
    expect(codes(without.report.reasons)).toContain("fuzz_failed");
    expect(codes(withConfig.report.reasons).filter((c) => c === "fuzz_failed")).toEqual([]);
  });

  it("lists every reason when several checks fail", async () => {
    const index = "export default { turnEnds() {}, toolCall(event) { return event.call.args.command.trim(); } };\n";
    const fixtures = toolCallFixture("shell", { command: "rm -rf /" }, { type: "block" });
    const result = await gate("many", index, fixtures);
    expect(codes(result.report.reasons)).toEqual(["unknown_exports", "fixture_failed", "fuzz_failed"]);
  });
});

describe("deployHook", () => {
  it("stores nothing when the gate rejects", async () => {
    const store = new MemoryBundleStore();
    const entry = writeHook(root, "rejected", GOOD_INDEX, null);
    const result = await deployHook({ store, executor, entry, tenantId, by: "ops", activate: true, fuzz });
    expect(result.type).toBe("rejected");
    expect(await store.tenants()).toEqual([]);
    expect(await store.audit()).toEqual([]);
  });

  it("stores a passing bundle with its gate report and config, activated when asked", async () => {
    const store = new MemoryBundleStore();
    const entry = writeHook(root, "deployed", GOOD_INDEX);
    const result = await deployHook({
      store,
      executor,
      entry,
      tenantId,
      by: "ops",
      activate: true,
      config: { a: 1 },
      fuzz,
    });
    expect(result.type).toBe("deployed");
    const active = await store.active(tenantId);
    expect(active).toMatchObject({ version: 1, config: { a: 1 } });
    expect(active?.manifest.hookPoints).toEqual(["tool.call"]);
    expect((await store.version(tenantId, 1))?.gateReport).toMatchObject({ type: "passed", reasons: [] });
  });

  it("stores paths relative to the hook, never the uploader's", async () => {
    const store = new MemoryBundleStore();
    const entry = writeHook(root, "relative", GOOD_INDEX);
    await deployHook({ store, executor, entry: resolve(entry), tenantId, by: "ops", fuzz, cwd: "/" });
    const stored = await store.version(tenantId, 1);
    expect(stored?.gateReport).toMatchObject({ entry: "index.ts", fixtures: { file: "fixtures.jsonl" } });
    expect(stored?.manifest.entry).toBe("index.ts");
    expect(JSON.stringify(stored)).not.toContain(root);
    const broken = writeHook(root, "broken-relative", "export default { toolCall() { return {{ } };\n");
    const result = await runDeployGate({ entry: resolve(broken), executor, tenantId, fuzz, cwd: "/" });
    expect(JSON.stringify(result.report)).not.toContain(root);
    const reason = result.report.reasons[0];
    expect(reason?.code === "bundle_failed" && reason.problems[0]?.file).toBe("index.ts");
  });
});
