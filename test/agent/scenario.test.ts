import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  declaredTool,
  loadScenario,
  ModelError,
  parseScenario,
  ScenarioError,
  ScriptedTurn,
  scriptedModel,
  ToolSchemaError,
} from "../../src/agent/index.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-scenario-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const request = {
  model: "scripted",
  messages: [{ role: "user" as const, content: "12345678" }],
  tools: [],
  settings: {},
};
const signal = new AbortController().signal;

describe("scriptedModel", () => {
  it("replays its turns in order with ids, finish reasons and estimated usage", async () => {
    const model = scriptedModel([
      { text: "a", toolCalls: [{ name: "shell", args: { command: "ls" } }] },
      { text: "done" },
    ]);
    const first = await model.complete(request, signal);
    expect(first).toEqual({
      message: {
        role: "assistant",
        content: "a",
        toolCalls: [{ id: "call_1_1", name: "shell", args: { command: "ls" } }],
      },
      usage: { inputTokens: 2, outputTokens: 1 },
      finishReason: "toolCalls",
    });
    const second = await model.complete(request, signal);
    expect(second).toMatchObject({ message: { role: "assistant", content: "done" }, finishReason: "stop" });
    expect(second.message).not.toHaveProperty("toolCalls");
  });

  it("says what to do when the script runs out", async () => {
    const model = scriptedModel([{ text: "only" }]);
    await model.complete(request, signal);
    const error = await model.complete(request, signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: "script_exhausted" });
    expect((error as Error).message).toMatch(/no turn 2.*has 1.*model\.turns/);
  });

  it("rejects a turn with an invalid tool name", () => {
    expect(ScriptedTurn.safeParse({ toolCalls: [{ name: "rm -rf" }] }).success).toBe(false);
  });
});

describe("declaredTool", () => {
  const shell = declaredTool({
    name: "shell",
    parameters: {
      type: "object",
      properties: { command: { type: "string" }, cwd: { type: "string" } },
      required: ["command"],
      additionalProperties: false,
    },
    result: "ran {command} in {cwd}",
  });

  it("validates arguments against its JSON Schema", () => {
    expect(shell.parameters.safeParse({ command: "ls" }).success).toBe(true);
    expect(shell.parameters.safeParse({ command: 1 }).success).toBe(false);
    expect(shell.parameters.safeParse({ command: "ls", extra: true }).success).toBe(false);
    expect(shell.spec.parameters).toMatchObject({ required: ["command"] });
  });

  it("fills its canned result from the arguments, or echoes them", async () => {
    const context = { callId: "c1", signal };
    expect(await shell.execute({ command: "ls", cwd: "/w" }, context)).toEqual({
      content: "ran ls in /w",
      isError: false,
    });
    expect(await shell.execute({ command: "ls" }, context)).toEqual({ content: "ran ls in {cwd}", isError: false });
    const echo = declaredTool({ name: "echo" });
    expect(await echo.execute({ a: 1 }, context)).toEqual({ content: '{"a":1}', isError: false });
    const failing = declaredTool({ name: "fail", result: { content: "no access to {path}", isError: true } });
    expect(await failing.execute({ path: "/etc" }, context)).toEqual({ content: "no access to /etc", isError: true });
  });

  it("refuses a schema with a remote $ref", () => {
    expect(() => declaredTool({ name: "x", parameters: { $ref: "https://example.com/schema.json" } })).toThrow(
      ToolSchemaError,
    );
  });
});

describe("scenarios", () => {
  const valid = {
    tenant: "acme",
    hook: "../hooks/x",
    input: "go",
    tools: [{ name: "shell" }],
    model: { turns: [{ text: "ok" }] },
  };

  it("applies defaults and resolves the hook against the file's folder", async () => {
    const file = join(dir, "ok.json");
    await writeFile(file, JSON.stringify(valid));
    const loaded = await loadScenario(file);
    expect(loaded.hookEntry).toBe(join(dir, "..", "hooks", "x"));
    expect(loaded.scenario).toMatchObject({ maxTurns: 20, parallelToolCalls: false, followUp: [] });
  });

  it("names the field that is wrong", () => {
    const bad = { ...valid, tenant: "Acme Corp", tools: [{ name: "shell" }, { name: "bad name" }] };
    expect(() => parseScenario(bad, "demo.json")).toThrow(/demo\.json is not a valid scenario/);
    expect(() => parseScenario(bad, "demo.json")).toThrow(/`tenant`: Expected a tenant id/);
    expect(() => parseScenario(bad, "demo.json")).toThrow(/`tools\[1\]\.name`/);
    expect(() => parseScenario({ ...valid, model: { turns: [] } })).toThrow(/`model\.turns`/);
    expect(() => parseScenario({ ...valid, surprise: 1 })).toThrow(/surprise/);
  });

  it("reports a missing file and broken JSON with the file name", async () => {
    await expect(loadScenario(join(dir, "missing.json"))).rejects.toThrow(/missing\.json: no such file/);
    const broken = join(dir, "broken.json");
    await writeFile(broken, "{ nope");
    const error = await loadScenario(broken).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScenarioError);
    expect((error as Error).message).toMatch(/broken\.json is not JSON/);
  });
});
