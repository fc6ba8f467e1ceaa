import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import blockDestructiveShell from "../../hooks/block-destructive-shell/index.js";
import redactSecrets from "../../hooks/redact-secrets/index.js";
import type { Hooks } from "../../sandbox/guest/hook-sdk.js";
import { compileHook } from "../../src/bundler/index.js";
import { HOOK_POINTS, type HookPoint, handlerOf } from "../../src/protocol/index.js";

const EXAMPLES: Record<string, Hooks> = {
  "block-destructive-shell": blockDestructiveShell,
  "redact-secrets": redactSecrets,
};

interface FixtureLine {
  point: HookPoint;
  event: unknown;
  expect: { noop?: true; type?: string | null; [key: string]: unknown };
}

async function fixtures(name: string): Promise<FixtureLine[]> {
  const text = await readFile(new URL(`../../hooks/${name}/fixtures.jsonl`, import.meta.url), "utf8");
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as FixtureLine);
}

const ctx = {
  tenantId: "acme",
  runId: "run-1",
  turn: 0,
  hookId: "example",
  bundle: { version: 1, hash: `sha256-${"0".repeat(64)}` },
  config: null,
  state: {},
};

describe.each(Object.keys(EXAMPLES))("example hook %s", (name) => {
  it("bundles cleanly", async () => {
    const built = await compileHook(`hooks/${name}`);
    expect(built.hash).toMatch(/^sha256-[0-9a-f]{64}$/);
    expect(built.code).not.toMatch(/\brequire\(/);
  });

  it("has at least four fixtures, including no-op cases, with valid events", async () => {
    const lines = await fixtures(name);
    expect(lines.length).toBeGreaterThanOrEqual(4);
    expect(lines.some((l) => l.expect.noop === true)).toBe(true);
    for (const line of lines) expect(HOOK_POINTS[line.point].event.safeParse(line.event).success).toBe(true);
  });

  // The handlers are our own code: run directly here; the sandbox runs them in the executor tests.
  it("decides every fixture as expected", async () => {
    const hooks = EXAMPLES[name] as Record<string, (event: unknown, c: typeof ctx) => unknown>;
    for (const line of await fixtures(name)) {
      const handler = hooks[handlerOf(line.point)];
      const result = (await handler?.(line.event, ctx)) ?? null;
      if (line.expect.noop) {
        expect(result, JSON.stringify(line.event)).toBeNull();
      } else {
        expect(result, JSON.stringify(line.event)).toMatchObject(line.expect);
        expect(HOOK_POINTS[line.point].result.safeParse(result).success).toBe(true);
      }
    }
  });
});
