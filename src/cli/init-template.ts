import { resultTypes } from "../fixture-runner/index.js";
import { type HookPoint, handlerOf, type JsonValue } from "../protocol/index.js";

const SHELL_CALL = { id: "c1", name: "shell", args: { command: "rm -rf /" } };

/** A hand-written sample event per point; points without one get a generated (valid) event. */
const SAMPLE_EVENTS: Partial<Record<HookPoint, JsonValue>> = {
  "run.start": { input: [{ role: "user", content: "Clean up the build folder" }] },
  "input.inbound": { source: "user", message: { role: "user", content: "Clean up the build folder" } },
  "tool.call": { call: SHELL_CALL, batch: { index: 0, size: 1 } },
  "tool.result": {
    call: { ...SHELL_CALL, args: { command: "cat .env" } },
    executed: true,
    result: { content: "API_KEY=sk-live-123", isError: false },
  },
  "turn.end": { turn: 1, message: { role: "assistant", content: "Done." }, toolResults: [] },
  "output.validate": { output: "Done." },
};

/** The versions a new hook project's tools are pinned to: the ones isohook itself is tested with. */
export const PROJECT_TOOLS = { typescript: "7.0.2", vitest: "4.1.12" } as const;

/**
 * The files of a new hook project, by path. `isohookSpec` is the isohook dependency's npm spec. The hook
 * sits in `hook/`, away from the project's node_modules: a hook folder is bundled whole, and may hold no
 * link that leads out of it (npm links a `file:` dependency).
 */
export function hookProjectFiles(
  name: string,
  points: readonly HookPoint[],
  isohookSpec: string,
  generated: (point: HookPoint) => JsonValue,
): Record<string, string> {
  const fixtures = points.flatMap((point) => fixtureLines(point, SAMPLE_EVENTS[point] ?? generated(point)));
  return {
    "package.json": `${JSON.stringify(
      {
        name,
        version: "0.1.0",
        private: true,
        type: "module",
        scripts: { test: "vitest run", typecheck: "tsc -p .", "test:sandbox": "isohook test hook" },
        devDependencies: { isohook: isohookSpec, ...PROJECT_TOOLS },
      },
      null,
      2,
    )}\n`,
    "tsconfig.json": `${JSON.stringify(
      {
        compilerOptions: {
          target: "ES2022",
          module: "ESNext",
          moduleResolution: "bundler",
          lib: ["ES2022"],
          types: [],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
        },
        include: ["hook"],
      },
      null,
      2,
    )}\n`,
    "hook/index.ts": indexTs(points),
    "hook/fixtures.jsonl": `${fixtures.join("\n")}\n`,
    "hook.test.ts": testTs(points.includes("tool.call") ? TOOL_CALL_TEST : ""),
    ".gitignore": "node_modules/\n",
  };
}

function fixtureLines(point: HookPoint, event: JsonValue): string[] {
  if (point === "tool.call") {
    const safe = { call: { id: "c2", name: "shell", args: { command: "ls" } }, batch: { index: 0, size: 1 } };
    return [
      JSON.stringify({ name: "blocks rm -rf /", point, event, expect: { type: "block" } }),
      JSON.stringify({ name: "lets ls through", point, event: safe, expect: { noop: true } }),
    ];
  }
  return [JSON.stringify({ point, event, expect: { noop: true } })];
}

function indexTs(points: readonly HookPoint[]): string {
  const handlers = points.map((point) => {
    const handler = handlerOf(point);
    const results =
      resultTypes(point)
        .map((t) => `{ type: "${t}", … }`)
        .join(", ") || "none";
    if (point === "tool.call") {
      return `  ${handler}(event, ctx) {
    // Results: ${results}. Returning nothing lets the call through.
    const command = String(event.call.args.command ?? "");
    if (event.call.name === "shell" && /\\brm\\s+-rf\\s+\\/(\\s|$)/.test(command)) {
      console.log(\`blocked for \${ctx.tenantId}: \${command}\`);
      return { type: "block", reason: "destructive shell command: rm -rf /" };
    }
    return undefined;
  },`;
    }
    return `  ${handler}(event, ctx) {
    // Results: ${results}. Returning nothing is the no-op.
    void event;
    void ctx;
    return undefined;
  },`;
  });
  return `import { defineHooks } from "isohook/hook-sdk";

/**
 * This tenant's hooks. Each handler gets (event, ctx) and returns a result of its point or nothing.
 * \`isohook schema <point>\` prints a point's event and results; \`ctx.state\` survives between calls of a run.
 */
export default defineHooks({
${handlers.join("\n")}
});
`;
}

const TOOL_CALL_TEST = `
  it("blocks rm -rf / and says why", async () => {
    const event = { call: { id: "c1", name: "shell", args: { command: "rm -rf /" } }, batch: { index: 0, size: 1 } };
    const outcome = await hook.call("tool.call", event);
    expect(outcome).toMatchObject({ type: "decided", result: { type: "block" } });
    expect(outcome.logs).toEqual(["blocked for isohook-test: rm -rf /"]);
  });
`;

const testTs = (extra: string) => `import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HookUnderTest, testHook } from "isohook/testing";

let hook: HookUnderTest;
beforeAll(async () => {
  hook = await testHook("hook"); // bundled as \`isohook upload\` bundles it, run in the real sandbox
});
afterAll(() => hook.close());

describe("hooks", () => {
  it("passes every line of fixtures.jsonl", async () => {
    const failed = (await hook.fixtures()).filter((report) => report.passed === false);
    expect(failed).toEqual([]);
  });
${extra}});
`;
