import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { trace } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/index.js";
import { fakeIO } from "./fake-io.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

async function cli(argv: string[], env: Record<string, string> = {}) {
  const io = fakeIO(REPO, env);
  const code = await runCli(argv, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

let dir: string;
let scenario: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-otel-"));
  const parsed = JSON.parse(await readFile(join(REPO, "scenarios/acme-coding-agent.json"), "utf8"));
  parsed.hook = join(REPO, "scenarios", parsed.hook);
  if (typeof parsed.root === "string") parsed.root = join(REPO, "scenarios", parsed.root);
  Object.assign(parsed, { limits: { timeoutMs: 250 }, budgets: { turnMs: 5_000, runMs: 30_000 } });
  scenario = join(dir, "acme.json");
  await writeFile(scenario, JSON.stringify(parsed));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Timings and the run id differ from run to run; the rest of a trace does not. */
const steady = (text: string) => text.replace(/run_[0-9a-f-]+/g, "run_…").replace(/[\d.]+ ms/g, "… ms");

describe("ISOHOOK_OTEL=console", () => {
  it("prints each span as a JSON line on stderr and leaves stdout as it was", async () => {
    const plain = await cli(["run", "--scenario", scenario]);
    const traced = await cli(["run", "--scenario", scenario], { ISOHOOK_OTEL: "console" });
    expect(traced.code).toBe(0);
    expect(plain.stderr).toBe("");
    expect(steady(traced.stdout)).toBe(steady(plain.stdout));
    const lines = traced.stderr
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { span?: string; metric?: string; attributes?: Record<string, unknown> });
    const spans = lines.filter((l) => l.span !== undefined);
    expect(lines.every((l) => l.span !== undefined || l.metric !== undefined)).toBe(true);
    for (const span of spans) expect(span.attributes).toBeTypeOf("object");
    const hooks = spans.filter((s) => s.attributes?.["isohook.hook.source"] === "tenant");
    expect(hooks.length).toBeGreaterThanOrEqual(4);
    expect(new Set(hooks.map((s) => s.span))).toEqual(new Set(["isohook.hook"]));
    expect(hooks[0]?.attributes).toMatchObject({ "isohook.tenant.id": "acme", "isohook.hook.id": "tenant:acme@v1" });
    expect(spans.map((s) => s.span)).toContain("invoke_agent");
    expect(lines.map((l) => l.metric)).toContain("isohook.hook.calls");
    expect(traced.stderr).not.toMatch(/sk-proj-/);
    // The SDK is unregistered when the command ends.
    expect(trace.getTracer("isohook").startSpan("x").isRecording()).toBe(false);
  });

  it("refuses a value other than console, saying which one works", async () => {
    const { code, stdout } = await cli(["run", "--scenario", scenario, "--json"], { ISOHOOK_OTEL: "otlp" });
    expect(code).toBe(1);
    const error = JSON.parse(stdout.trim()) as { error: { code: string; message: string } };
    expect(error.error.code).toBe("invalid_otel");
    expect(error.error.message).toContain("set it to `console`");
  });
});
